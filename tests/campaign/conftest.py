"""The throw-away PostgreSQL server of the store tests, for campaigns sharing a store."""

from tests.store.conftest import pg_cluster, pg_url  # noqa: F401
