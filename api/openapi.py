"""OpenAPI 3.1 document: request bodies come from the service core's own strict models, so the
document describes exactly what validation accepts (the routes read raw JSON and hand it to the core),
and answers from the closed models of api/schemas.py and api/*_schemas.py (runs, results, estimates,
series, usage, transcripts, analysis, matches, agent seats' turns).

Routes carry no `-> dict` annotation: FastAPI would take it for a response model, merge an open object
into every documented answer and validate each answer against it."""
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


# Models a route names by reference (ref()), outside FastAPI's own response models: install() adds them.
_REFERENCED: dict[str, type[BaseModel]] = {}
TEXT = {"type": "string"}


def ref(*models: type[BaseModel]) -> dict[str, Any]:
    """The schema of one of `models`, by reference to its component."""
    for m in models:
        _REFERENCED[m.__name__] = m
    refs = [{"$ref": _REF.format(model=m.__name__)} for m in models]
    return refs[0] if len(refs) == 1 else {"anyOf": refs}


def responses(ok: dict[int, Any]) -> dict[int | str, dict]:
    """Documented answers: the success shapes plus the error envelope for every 4XX and 5XX. A shape is
    a model, or {media type: schema} for answers in several media types (the first is a generated
    client's, so JSON comes first where there is JSON)."""
    out: dict[int | str, dict] = {}
    for status, shape in ok.items():
        if isinstance(shape, dict):
            out[status] = {"description": "OK", "content": {media: {"schema": schema}
                                                            for media, schema in shape.items()}}
        else:
            out[status] = {"model": shape, "description": "OK"}
    # as content, not model: FastAPI would file a model under the route's own media type (text/plain, ...)
    envelope = {"application/json": {"schema": ref(ErrorEnvelope)}}
    out["4XX"] = {"description": "refused: {error, message} with SPEC.md's code", "content": envelope}
    out["5XX"] = {"description": "internal_error", "content": envelope}
    return out


def install(app: FastAPI, body_models: list[type[BaseModel]]) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, openapi_version="3.1.0",
                              description=app.description, routes=app.routes)
            _, defs = models_json_schema([(m, "validation") for m in body_models]
                                         + [(m, "serialization") for m in _REFERENCED.values()], ref_template=_REF)
            components = doc.setdefault("components", {})
            components.setdefault("schemas", {}).update(defs.get("$defs", {}))
            # Every operation needs a token unless it says `security: []` (discovery, this document).
            components["securitySchemes"] = SECURITY_SCHEMES
            doc["security"] = [{name: []} for name in SECURITY_SCHEMES]
            app.openapi_schema = doc
        return app.openapi_schema
    app.openapi = openapi  # type: ignore[method-assign]
