"""OpenAPI 3.1 document: request bodies come from the service core's own strict models, so the
document describes exactly what validation accepts (the routes read raw JSON and hand it to the core)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from api.schemas import ErrorEnvelope

_REF = "#/components/schemas/{model}"
SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer dsk_..."},
    "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key", "description": "x-api-key: dsk_..."},
}


def body(model: type[BaseModel]) -> dict[str, Any]:
    """openapi_extra for a route whose JSON body is `model`."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": _REF.format(model=model.__name__)}}}}}


def responses(ok: dict[int, Any]) -> dict[int | str, dict]:
    """Documented answers: the success shapes plus the error envelope for every 4XX and 5XX."""
    out: dict[int | str, dict] = {}
    for status, shape in ok.items():
        if isinstance(shape, dict):
            out[status] = {"description": "OK", "content": {"application/json": {"schema": shape}}}
        else:
            out[status] = {"model": shape, "description": "OK"}
    out["4XX"] = {"model": ErrorEnvelope, "description": "refused: {error, message} with SPEC.md's code"}
    out["5XX"] = {"model": ErrorEnvelope, "description": "internal_error"}
    return out


def install(app: FastAPI, body_models: list[type[BaseModel]]) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, openapi_version="3.1.0",
                              description=app.description, routes=app.routes)
            _, defs = models_json_schema([(m, "validation") for m in body_models], ref_template=_REF)
            components = doc.setdefault("components", {})
            components.setdefault("schemas", {}).update(defs.get("$defs", {}))
            # Every operation needs a token unless it says `security: []` (discovery, this document).
            components["securitySchemes"] = SECURITY_SCHEMES
            doc["security"] = [{name: []} for name in SECURITY_SCHEMES]
            app.openapi_schema = doc
        return app.openapi_schema
    app.openapi = openapi  # type: ignore[method-assign]
