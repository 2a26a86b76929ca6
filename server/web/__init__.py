"""HTTP plumbing every route shares: problems (RFC 9457), content negotiation, authentication and
CSRF.
"""
