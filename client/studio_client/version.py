"""The OpenAPI document's info.version this client was written for; the distribution's version too,
so `pip show scenario-studio-client` names the API it speaks (Studio.check compares it with a server)."""
API_VERSION = "1.0.0"
