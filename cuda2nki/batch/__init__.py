"""cuda2nki.batch"""
