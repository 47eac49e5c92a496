"""cuda2nki.codegen"""
