"""cuda2nki.lift"""
