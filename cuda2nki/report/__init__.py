"""cuda2nki.report"""
