"""The gRPC service layer: proto ⇄ domain, the error table, listeners, token auth, and the
composition root (:mod:`.app`). The RPCs are :mod:`.service`'s; runs are started and
streamed by :mod:`.runner`, for the service and for the input queue (:mod:`.queueing`)."""
