"""cuda2nki.ir"""
