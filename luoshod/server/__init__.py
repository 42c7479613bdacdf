"""The gRPC service layer: proto ⇄ domain, the error table, listeners, token auth, and the
composition root (:mod:`.app`)."""
