"""Fakes of the services memd talks to over the network (only the network is faked)."""
