"""The embedded PostgreSQL (with pgvector) used when DATABASE_URL is not set.

It is a Django database backend: the server is started by whichever process
opens the first connection (runserver, migrate, the tests), never at import.
"""
