"""`memd ui`: a small local web page over the daemon's socket (one more client, like the CLI).

channel  the socket, or without a daemon the index opened read-only (the CLI's fallback)
signin   who may use the page: a token, then a cookie; Host checks; CSRF on every POST
tree     the memory tree as files, sections and items, read from the Markdown the daemon indexes
charts   the session timeline and the per-tier budget bars (inline SVG, drawn on the server)
web      the routes and views
run      the `memd ui` command: bind a free loopback port, print the URL, open the browser
"""
