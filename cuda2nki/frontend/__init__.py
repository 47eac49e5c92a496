"""cuda2nki.frontend"""
