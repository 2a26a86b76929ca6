"""What every format parser reads through: bytes and JSON with limits, safe XML, typed JSON fields,
answer values, SPARQL JSON results, question fields, diagnostics.
"""
