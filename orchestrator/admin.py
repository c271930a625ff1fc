"""Operator commands of docs/api.md (account, token, key, outbox) and `studio doctor` for api/cli.py."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from orchestrator.errors import AdminError
from orchestrator.plans import PLAN_IDS, ConfigError


def _core(args: argparse.Namespace):
    from orchestrator.core import Core
    return Core.open(args.data_dir)


def _print(obj: object) -> None:
    print(json.dumps(obj, indent=2))


def cmd_account_create(args: argparse.Namespace) -> int:
    from orchestrator.accounts import create_account
    _print(create_account(_core(args), args.email, handle=args.handle, plan=args.plan, verified=args.verified))
    return 0


def cmd_account_set(args: argparse.Namespace) -> int:
    from orchestrator.accounts import set_account
    _print(set_account(_core(args), args.email, plan=args.plan, verified=args.verified, frozen=args.frozen))
    return 0


def cmd_account_events(args: argparse.Namespace) -> int:
    from orchestrator.accounts import by_email
    from orchestrator.outbox import events
    core = _core(args)
    _print(events(core, by_email(core, args.email).id))
    return 0


def cmd_account_login_link(args: argparse.Namespace) -> int:
    from orchestrator import datadir
    from orchestrator.console_auth import login_link
    core = _core(args)
    print(login_link(core, args.email, args.base_url or datadir.base_url(core.data_dir, core.config)))
    return 0


def cmd_account_password(args: argparse.Namespace) -> int:
    from orchestrator.console_auth import set_password
    password = sys.stdin.readline().rstrip("\n")
    set_password(_core(args), args.email, password)
    print(f"studio: password set for {args.email}", file=sys.stderr)
    return 0


def cmd_token_mint(args: argparse.Namespace) -> int:
    from orchestrator.auth import mint, parse_scopes
    token, _ = mint(_core(args), args.email, name=args.name, scopes=parse_scopes(args.scopes),
                    expires_in_ms=args.expires_in_ms)
    print(token)  # alone on stdout, once: scripts capture it with $(studio token mint ...)
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    from orchestrator.auth import revoke
    _print(revoke(_core(args), args.email, args.prefix))
    return 0


def cmd_token_list(args: argparse.Namespace) -> int:
    from orchestrator.auth import list_tokens
    _print(list_tokens(_core(args), args.email))
    return 0


def cmd_key_set(args: argparse.Namespace) -> int:
    from orchestrator.accounts import by_email
    from orchestrator.seats.keys import PLATFORM, check_key, held, set_key
    models = [m for m in args.models.split(",") if m] if args.models else None
    core = _core(args)
    stored = set_key(core, provider=args.provider, key=args.key, email=args.email, platform=args.platform,
                     base_url=args.base_url, balance_usd=args.balance_usd, models=models,
                     usd_per_mtok_in=args.usd_per_mtok_in, usd_per_mtok_out=args.usd_per_mtok_out)
    if not args.no_check:  # stored whatever the answer: an offline setup still gets its key
        owner = PLATFORM if args.platform else by_email(core, args.email).id
        stored["check"] = check_key(core, owner, args.provider, args.check_model)
        stored["tools"] = held(core, owner)[args.provider]["tools"]
    _print(stored)
    return 0


def cmd_key_list(args: argparse.Namespace) -> int:
    from orchestrator.seats.keys import list_keys
    _print(list_keys(_core(args), email=args.email, platform=args.platform))
    return 0


def cmd_prices_update(args: argparse.Namespace) -> int:
    from orchestrator.seats.price_update import update
    written = update(_core(args), email=args.email)
    _print(written)
    for why in written["refused"]:  # a page left out: the operator should see it, not only the JSON
        print(f"not asked: {why}", file=sys.stderr)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from orchestrator.doctor import doctor
    report = doctor(_core(args), repair=args.repair)
    _print(report)
    return 1 if report["found"] and not report["repaired"] else 0


def cmd_outbox_list(args: argparse.Namespace) -> int:
    from orchestrator.outbox import messages
    _print(messages(_core(args), args.email.strip().lower() if args.email else None))
    return 0


def guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Operator mistakes print one line on stderr and exit 2, not a traceback."""
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (AdminError, ConfigError) as e:
            print(f"studio: {e}", file=sys.stderr)
            return 2
    return run


def add_parsers(sub: argparse._SubParsersAction, add_data_dir: Callable[[argparse.ArgumentParser], None]) -> None:
    def command(parent, name: str, func, help: str) -> argparse.ArgumentParser:
        p = parent.add_parser(name, help=help)
        add_data_dir(p)
        p.set_defaults(func=guarded(func))
        return p

    group = sub.add_parser("account", help="create and change accounts").add_subparsers(dest="action", required=True)
    p = command(group, "create", cmd_account_create, "create an account; prints it as JSON")
    p.add_argument("--email", required=True, help="the new account's email address")
    p.add_argument("--handle", help="public name, 1 to 40 letters, digits, '_', '.' or '-' (default: from the email)")
    p.add_argument("--plan", choices=PLAN_IDS, default="free", help="the account's plan")
    p.add_argument("--verified", action="store_true", help="mark the email as verified (default: unverified)")
    p = command(group, "set", cmd_account_set, "change plan, verification or frozen state; prints the account")
    p.add_argument("--email", required=True, help="the account's email address")
    p.add_argument("--plan", choices=PLAN_IDS, help="move the account to this plan (default: unchanged)")
    p.add_argument("--verified", dest="verified", action="store_true", default=None,
                   help="mark the email as verified")
    p.add_argument("--unverified", dest="verified", action="store_false", help="mark the email as unverified")
    p.add_argument("--frozen", dest="frozen", action="store_true", default=None,
                   help="freeze the account (a payment dispute): its runs cannot launch")
    p.add_argument("--unfrozen", dest="frozen", action="store_false", help="lift the freeze")

    p = command(group, "events", cmd_account_events, "the account's security events (minted, revoked, signed in), oldest first")
    p.add_argument("--email", required=True, help="the account's email address")
    p = command(group, "login-link", cmd_account_login_link, "print a one-time web console sign-in URL (15 minutes)")
    p.add_argument("--email", required=True, help="the account's email address")
    p.add_argument("--base-url", help="where the service is reached (default: [console] public_url in "
                   "config.toml, else the address `studio serve` last served on, else http://127.0.0.1:8000)")
    p = command(group, "password", cmd_account_password, "set the web console password, read from stdin")
    p.add_argument("--email", required=True, help="the account's email address")

    group = sub.add_parser("token", help="mint, revoke and list access tokens").add_subparsers(dest="action", required=True)
    p = command(group, "mint", cmd_token_mint, "mint a token; prints the plaintext once")
    p.add_argument("--email", required=True, help="the account the token acts as")
    p.add_argument("--name", default="default", help="a label to tell the account's tokens apart")
    p.add_argument("--scopes", help="comma-separated; default scenarios:read,scenarios:write,runs:read")
    p.add_argument("--expires-in-ms", type=int, help="lifetime in milliseconds (default: never expires)")
    p = command(group, "revoke", cmd_token_revoke, "revoke a token at once")
    p.add_argument("--email", required=True, help="the account that holds the token")
    p.add_argument("--prefix", required=True, help="the token's first 12 characters, as `token list` shows them")
    p = command(group, "list", cmd_token_list, "name, prefix, scopes, expiry, last used")
    p.add_argument("--email", required=True, help="the account whose tokens are listed")

    group = sub.add_parser("key", help="store provider keys (encrypted at rest)").add_subparsers(dest="action", required=True)
    from orchestrator.seats.keys import KEYLESS, NEEDS_BASE_URL, PROVIDERS
    p = command(group, "set", cmd_key_set, "store a provider key for an account, or the platform's sponsor key")
    p.description = (f"Store a provider key, encrypted at rest and never printed again. Providers: "
                     f"{', '.join(PROVIDERS)}. {' and '.join(NEEDS_BASE_URL)} need --base-url; "
                     f"{', '.join(KEYLESS)} needs no --key.")
    owner = p.add_mutually_exclusive_group(required=True)
    owner.add_argument("--email", help="the account that holds the key")
    owner.add_argument("--platform", action="store_true",
                       help="the operator's key that sponsors --models for accounts without their own")
    p.add_argument("--provider", required=True, metavar="PROVIDER",
                   help=f"one of {', '.join(PROVIDERS)}")
    p.add_argument("--key", help=f"the provider's API key (not needed for {', '.join(KEYLESS)})")
    p.add_argument("--base-url", help=f"the provider's API base URL (required for {', '.join(NEEDS_BASE_URL)})")
    p.add_argument("--balance-usd", type=float, help="router keys: the credit left, checked before launches")
    p.add_argument("--models", help="platform keys: comma-separated models it sponsors")
    p.add_argument("--usd-per-mtok-in", type=float, help="the key's own price, USD per million input tokens "
                   "(self-hosted providers cost nothing without one)")
    p.add_argument("--usd-per-mtok-out", type=float, help="the key's own price, USD per million output tokens")
    p.add_argument("--no-check", action="store_true", help="store without asking the provider whether the key "
                   "works (by default one request listing models, at most a few seconds, and for router, ollama "
                   "and openai-compatible two short chat completions asking whether the server makes tool "
                   "calls; the key is stored either way)")
    p.add_argument("--check-model", metavar="MODEL", help="the model the check's chat completions ask (default: "
                   "the first of --models, else for ollama and openai-compatible the first the server lists; "
                   "a router key is probed only on a named model)")
    p = command(group, "list", cmd_key_list, "providers held, never the key; with each its last check")
    owner = p.add_mutually_exclusive_group(required=True)
    owner.add_argument("--email", help="the account whose keys are listed")
    owner.add_argument("--platform", action="store_true", help="the operator's sponsor keys")

    p = command(sub, "doctor", cmd_doctor, "find (and repair) stored numbers JSON cannot carry")
    p.description = ("List every number an earlier version stored as Infinity or NaN (a run's spend or usage, a "
                     "turn row, a spend cap, a key's balance or prices, a row of <data dir>/prices.json); the "
                     "service reads them as null with a note. Exits 1 when any is found and not repaired.")
    p.add_argument("--repair", action="store_true", help="rewrite them: usage and spend as 0 (spend: its seats' "
                   "usage), turn rows and caps as null, price rows dropped")

    group = sub.add_parser("prices", help="the price table estimates use").add_subparsers(dest="action", required=True)
    p = command(group, "update", cmd_prices_update, "read a router's current prices into the data dir's price table")
    p.description = ("Read the router's own model list (GET {base}/models: each model's prompt and completion "
                     "price) with a stored router key, and write it to <data dir>/prices.json, dated today. "
                     "Estimates read it over the shipped table and name its date.")
    owner = p.add_mutually_exclusive_group()
    owner.add_argument("--email", help="use this account's router key (its stored base URL)")
    owner.add_argument("--platform", action="store_true", help="use the operator's sponsor router key (the default)")

    group = sub.add_parser("outbox", help="read the email outbox").add_subparsers(dest="action", required=True)
    p = command(group, "list", cmd_outbox_list, "notices queued or sent, oldest first")
    p.add_argument("--email", help="only the notices to this address (default: every notice)")
