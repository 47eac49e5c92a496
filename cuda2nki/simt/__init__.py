"""cuda2nki.simt"""
