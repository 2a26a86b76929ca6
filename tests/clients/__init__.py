"""Third-party clients the tests run: node programs (installed by ``npm ci``) and Jena."""
