"""cuda2nki.nkisim"""
