"""Keyed noise streams: the secret, the stream versions, SipHash."""
