"""The optional HTTP listener: the JSON API over ``AgentService``, its events as
Server-Sent Events, and the web console (``static/``)."""

from .server import HttpListener, check_http_listen, ssl_context

__all__ = ["HttpListener", "check_http_listen", "ssl_context"]
