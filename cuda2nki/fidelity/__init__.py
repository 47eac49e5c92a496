"""cuda2nki.fidelity: judging an NKI port against its CUDA kernel (``cuda2nki check`` / ``review``).

Entry point: :func:`cuda2nki.fidelity.check.check` (also ``cuda2nki.api.check``).
"""
