"""cuda2nki.passes"""
