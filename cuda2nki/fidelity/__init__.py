"""cuda2nki.fidelity"""
