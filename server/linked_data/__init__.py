"""Linked data: resource routes, their documents and serialisations, terms for templates, the
vocabulary, service description and VoID.
"""
