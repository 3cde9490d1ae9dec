"""Known technologies (category → memory type, subject → supersession key) and tool lists."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_SKILL,
    IMP_SKILL_MAIN,
    IMP_SWITCH,
    IMP_TOOL_HABIT,
    NOT_ORGS,
    PRONOUN_START_RE,
    Ctx,
    clean,
)
from memd.extraction.rules.style import style_topic


@dataclass(frozen=True, slots=True)
class _Tech:
    name: str
    category: str
    subject: str = ""


def _techs(category: str, subject: str, names: str) -> dict[str, _Tech]:
    out: dict[str, _Tech] = {}
    for name in names.split("|"):
        out[name.lower()] = _Tech(name, category, subject)
    return out


TECH: dict[str, _Tech] = {
    **_techs(
        "language",
        "",
        "Python|TypeScript|JavaScript|Go|Golang|Rust|Java|Kotlin|Swift|C|C++|C#|Ruby|PHP|Scala"
        "|Elixir|Erlang|Haskell|Dart|Lua|R|Julia|SQL|Bash|Zig|OCaml|Clojure|F#|Objective-C|Perl"
        "|MATLAB|Solidity|HTML|CSS",
    ),
    **_techs(
        "framework",
        "",
        "React|Vue|Vue.js|Angular|Svelte|SvelteKit|Next.js|NextJS|Nuxt|Remix|Astro|SolidJS"
        "|Django|Flask|FastAPI|Rails|Ruby on Rails|Spring|Spring Boot|Express|NestJS|Laravel"
        "|Tauri|Electron|Flutter|React Native|SwiftUI|PyTorch|TensorFlow|JAX|pandas|NumPy"
        "|LangChain|Tailwind|Tailwind CSS|TailwindCSS|Node|Node.js|NodeJS|Deno|Bun|.NET|Qt"
        "|jQuery|Redux|Zustand|GraphQL|gRPC|Pydantic|SQLAlchemy|Gin|Echo|Fiber|Actix|Axum|Tokio"
        "|Phoenix|Sinatra|Ktor|Hono|tRPC|Prisma|Drizzle|Sequelize|TypeORM|Hibernate|Celery|Typer"
        "|Click|Storybook|Bootstrap|htmx|Alpine.js|Ember|Gatsby|Pinia|MobX|RxJS|Three.js|D3"
        "|Unity|Unreal|Godot|Bevy|scikit-learn|Polars|Spark|Airflow|dbt|Jupyter|Streamlit",
    ),
    **_techs(
        "platform",
        "",
        "Redis|Supabase|Firebase|Elasticsearch|DuckDB"
        "|Docker|Kubernetes|K8s|AWS|GCP|Azure|Vercel|Cloudflare|Git|GitHub|GitLab|Terraform"
        "|DynamoDB|BigQuery|Snowflake|ClickHouse|Cassandra|Neo4j|Heroku|Netlify|Fly.io|Nginx"
        "|Grafana|Prometheus|Sentry|Jenkins|CircleCI|GitHub Actions|Ansible|Helm|Pulumi|Lambda"
        "|iOS|Android|watchOS|WebAssembly|Wasm",
    ),
    **_techs(
        "editor",
        "editor",
        "VSCode|VS Code|Visual Studio Code|Vim|Neovim|NeoVim|nvim|Emacs|IntelliJ|IntelliJ IDEA"
        "|PyCharm|WebStorm|GoLand|Cursor|Zed|Sublime|Sublime Text|Xcode|Android Studio|Helix"
        "|Windsurf|Visual Studio",
    ),
    **_techs(
        "tool", "tool:testing", "Jest|Vitest|Mocha|Jasmine|pytest|unittest|RSpec|JUnit|TestNG|AVA"
    ),
    **_techs("tool", "tool:e2e-testing", "Cypress|Playwright|Selenium|Puppeteer"),
    **_techs("tool", "tool:package-manager", "npm|Yarn|pnpm"),
    **_techs("tool", "tool:package-manager:python", "pip|Poetry|uv|Pipenv|PDM|Conda|Rye|Hatch"),
    **_techs("tool", "tool:bundler", "Webpack|Vite|Rollup|esbuild|Parcel|Turbopack|Rspack"),
    **_techs("tool", "tool:formatter:python", "Black|Ruff|autopep8|YAPF"),
    **_techs("tool", "tool:formatter:js", "Prettier|Biome|dprint"),
    **_techs("tool", "", "ESLint|mypy|Pyright|Flake8|Pylint|Clippy|golangci-lint|RuboCop"),
    **_techs("os", "os", "macOS|Mac|MacOS|Windows|Linux|Ubuntu|Arch|Arch Linux|Fedora|Debian"),
    # The shell the user works in: a setting of theirs, like the editor; Bash is also a language
    # one writes scripts in, but "I use bash" names the shell.
    **_techs("shell", "tool:shell", "zsh|fish|Nushell|PowerShell|Bash"),
    # The terminal one types in is a setting of theirs, like the editor; tmux runs inside any.
    **_techs(
        "tool",
        "tool:terminal",
        "iTerm|iTerm2|WezTerm|Alacritty|Kitty|Warp|Ghostty"
        "|Windows Terminal|GNOME Terminal|Konsole|Tabby|Hyper",
    ),
    **_techs("tool", "tool:multiplexer", "tmux|Zellij|screen"),
    **_techs("tool", "browser", "Chrome|Firefox|Safari|Arc|Edge|Brave"),
    **_techs("tool", "tool:build", "Gradle|Maven|Bazel|CMake|Cargo|Make"),
    # One CI service per project: moving to another replaces it.
    **_techs(
        "tool",
        "tool:ci",
        "CircleCI|GitHub Actions|GitLab CI|Jenkins|Travis CI|Buildkite|TeamCity|Azure Pipelines"
        "|Bitbucket Pipelines|Drone CI",
    ),
    **_techs("tool", "tool:import-sorter:python", "isort"),
    # Where an app is hosted: moving it replaces the old host.
    **_techs("platform", "tool:hosting", "Heroku|Netlify|Vercel|Fly.io|Render|Railway"),
    **_techs("platform", "", "AWS CDK|CDK|CloudFormation|Serverless"),
    # Managed container platforms ("Kubernetes (GKE)") and continuous delivery: one CD tool per
    # project, moving to another replaces it.
    **_techs("platform", "", "GKE|EKS|AKS|OpenShift|Nomad|ECS|Fargate|Cloud Run|App Engine"),
    **_techs("tool", "tool:cd", "Argo CD|ArgoCD|Flux|FluxCD|Spinnaker|Octopus Deploy"),
    **_techs("framework", "", "Hotwire|Turbo|Stimulus|Blazor|Quarkus|Micronaut"),
    # The main database of a project: "数据库换成 PostgreSQL" replaces MySQL.
    **_techs(
        "platform", "tool:database", "PostgreSQL|Postgres|MySQL|MariaDB|SQLite|MongoDB|Oracle"
    ),
    # Beyond the common ones: the distributions, shells, CI services, databases, runtimes,
    # schedulers, editors, terminals and browsers a person names as theirs, so a
    # value in any of them has the key of its kind.
    **_techs(
        "os",
        "os",
        "Pop!_OS|Linux Mint|Manjaro|openSUSE|NixOS|Gentoo|CentOS|Rocky Linux|AlmaLinux|RHEL"
        "|elementary OS|Kali Linux|FreeBSD|OpenBSD|ChromeOS|Chrome OS|EndeavourOS"
        "|Zorin OS|Void Linux|Asahi Linux|Raspberry Pi OS|Alpine Linux|Slackware|Deepin|UOS"
        "|openEuler|Kylin",
    ),
    **_techs("shell", "tool:shell", "ksh|tcsh|csh|Xonsh|Elvish|Git Bash|Oh My Zsh"),
    **_techs(
        "tool",
        "tool:ci",
        "Semaphore|Semaphore CI|Woodpecker CI|Woodpecker|Bamboo|Travis CI|AppVeyor|Bitrise|Codemagic"
        "|Concourse|Tekton|Cirrus CI|Codeship|Harness|Cloud Build|CodeBuild|AWS CodeBuild"
        "|Azure DevOps",
    ),
    **_techs(
        "platform",
        "tool:database",
        "CockroachDB|TiDB|OceanBase|SQL Server|MSSQL|Db2|YugabyteDB|PlanetScale|CouchDB|ScyllaDB"
        "|TimescaleDB|Couchbase|Firestore|Amazon Aurora|Spanner|Cosmos DB|CosmosDB|SingleStore|PolarDB"
        "|GaussDB|达梦|人大金仓|Informix|Sybase|FoundationDB|SurrealDB|RethinkDB|Percona",
    ),
    **_techs("tool", "runtime:python", "CPython|PyPy|Jython|GraalPy|MicroPython|IronPython"),
    **_techs("framework", "tool:orchestrator", "Airflow|Dagster|Prefect|Temporal|Argo Workflows"),
    **_techs(
        "editor",
        "editor",
        "Eclipse|NetBeans|RubyMine|CLion|Rider|PhpStorm|DataGrip|Fleet|Lapce|Kakoune|Notepad++"
        "|Geany|BBEdit|TextMate|Atom|Spyder|RStudio|DataSpell|Thonny|HBuilderX|Qt Creator|QtCreator"
        "|KDevelop|Code::Blocks|CodeLite",
    ),
    **_techs("tool", "tool:terminal", "Terminator|Tilix|Termius|MobaXterm|Xshell"),
    **_techs("tool", "browser", "Vivaldi|Opera|Chromium|LibreWolf|Tor Browser|Zen Browser"),
    # Message brokers, caches, background-job queues and hosts: one of each per system, so a
    # move to another replaces it ("the events go through Kafka" → "we're on NATS now").
    **_techs(
        "platform",
        "tool:queue",
        "Kafka|Apache Kafka|RabbitMQ|NATS|ActiveMQ|Apache Pulsar|RocketMQ|ZeroMQ|Amazon SQS|SQS"
        "|Google Pub/Sub|NSQ|Kinesis|Amazon MQ|Beanstalkd|Redpanda|EMQX|Mosquitto",
    ),
    **_techs(
        "platform", "tool:cache", "Memcached|Hazelcast|Varnish|KeyDB|Valkey|Ehcache|Aerospike"
    ),
    **_techs(
        "framework", "tool:job-queue", "Celery|Dramatiq|Sidekiq|Resque|BullMQ|Hangfire|Oban|Faktory"
    ),
    **_techs(
        "platform",
        "tool:hosting",
        "Hetzner|DigitalOcean|Linode|Vultr|OVH|OVHcloud|Scaleway|Contabo|Koyeb|Northflank"
        "|Alibaba Cloud|Aliyun|Tencent Cloud|Huawei Cloud|Oracle Cloud",
    ),
    **_techs("os", "os", "Win7|Win10|Win11"),
    # Apps people are "in" all day: never a place or an employer.
    **_techs("app", "", "Slack|Zoom|Teams|Jira|Notion|Figma|Linear|Discord|Excel"),
}
# Short forms people type, mapped to the name a memory should use.
_ALIASES = {
    "ts": "TypeScript",
    "js": "JavaScript",
    "golang": "Go",
    "cpp": "C++",
    "k8s": "Kubernetes",
    "postgres": "PostgreSQL",
    "py": "Python",
    "node": "Node.js",
    "nodejs": "Node.js",
    "nextjs": "Next.js",
    "vue.js": "Vue",
    "vs code": "VS Code",
    "nvim": "Neovim",
    "macbook": "macOS",
    "macbook pro": "macOS",
    "macbook air": "macOS",
    "pop os": "Pop!_OS",
    "popos": "Pop!_OS",
    "pop_os": "Pop!_OS",
    "pop!os": "Pop!_OS",
    "cockroach": "CockroachDB",
    "mint": "Linux Mint",
    "suse": "openSUSE",
    "jdk": "Java",
    "openjdk": "Java",
}
_PREFERENCE_CATEGORIES = frozenset({"editor", "os", "shell"})
# Tools one picks for oneself, like an editor: the terminal, the browser.
_PREFERENCE_SUBJECTS = frozenset({"tool:terminal", "browser"})

# The side of a web project a framework builds: a project has one of each at a time, so a later
# "we rewrote the backend in FastAPI" replaces "it's a Flask app" but not its React frontend.
_SIDES = {
    **dict.fromkeys(
        "react|vue|angular|svelte|sveltekit|next.js|nuxt|remix|astro|solidjs|ember|gatsby|jquery".split(
            "|"
        ),
        "frontend",
    ),
    **dict.fromkeys(
        "django|flask|fastapi|rails|ruby on rails|spring|spring boot|express|nestjs|laravel"
        "|phoenix|sinatra|ktor|hono|gin|echo|fiber|actix|axum|quarkus|micronaut".split("|"),
        "backend",
    ),
}


def stack_key(names: Sequence[str]) -> str:
    """The subject key of a project's stack statement: `stack:frontend` or `stack:backend` when
    it names one framework of that side and nothing else; else "" (a statement of several
    technologies replaces none of them: "a Svelte frontend and a Go API" is not all frontend)."""
    side = stack_side(names[0]) if len(names) == 1 else ""
    return f"stack:{side}" if side else ""


def stack_side(name: str) -> str:
    """The side (`frontend`, `backend`) the framework `name` builds, or ""."""
    tech = lookup_tech(name)
    return _SIDES.get(tech.name.lower(), "") if tech is not None else ""


EN_ADVERBS = (
    r"(?:mainly|mostly|primarily|usually|often|typically|generally|normally|also|now|currently"
    r"|still|always|really|just|daily|regularly|sometimes|mostly)"
)

ITEM_STOP_RE = re.compile(
    r"\s+(?:for|to|at|when|because|since|every|in\s+my|on\s+my|as\s+my|as\s+an?|which|but|so"
    r"|while|with\s+my|instead|these\s+days|nowadays|most\s+of|day\s+to\s+day|at\s+work"
    r"|and\s+(?:" + EN_ADVERBS + r"\s+)*(?:use|work|code|program|develop|write|prefer|like|love"
    r"|hate|live|am|'m|have|need|want|enjoy)\b)\b.*$|,\s*(?:which|but|so|and\s+I)\b.*$",
    re.I,
)
_ITEM_SPLIT_RE = re.compile(
    r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*&\s*|\s*(?<!\+)\+(?!\+)\s*|\s*/\s*)\s*"
)
_ITEM_TRIM_RE = re.compile(
    r"^(?:the|a|an|my|some|mostly|mainly|primarily|both)\s+|\s+(?:a\s+lot|daily|mostly|too"
    r"|as\s+well|every\s*day|now|a\s+bit|heavily|extensively|exclusively)$",
    re.I,
)
# Words that end a tool's name in "Jest in all my projects", "Rust for the ledger service".
_NAME_END_RE = re.compile(
    r"^(?:in|for|on|with|at|to|as|these|from|all|every|most|when|since|because|professionally"
    r"|daily|heavily|exclusively|mostly|now|nowadays|today|too|instead)$",
    re.I,
)
_PROPER_ITEM_RE = re.compile(
    r"^(?:[A-Z0-9.][\w.+#\-]*|[\w.\-]*[A-Z0-9+#][\w.+#\-]*)(?:\s+[A-Z0-9][\w.+#\-]*){0,2}$"
)


def _lookup(item: str) -> _Tech | None:
    low = item.lower()
    canonical = _ALIASES.get(low)
    if canonical is not None:
        return TECH.get(canonical.lower())
    return TECH.get(low)


_VERSION_TAIL_RE = re.compile(r"^(?P<name>\S.*?)\s*v?(?P<v>\d+(?:\.\d+)*)$")


def split_version(item: str) -> tuple[str, str]:
    """A known technology and the version written after it: "Ubuntu 22.04" → ("Ubuntu",
    "22.04"), "Vue 3" → ("Vue", "3"); anything else → (item, "")."""
    m = _VERSION_TAIL_RE.match(item.strip())
    if m is None or _lookup(item) is not None or _lookup(m.group("name")) is None:
        return item, ""
    return m.group("name"), m.group("v")


@functools.cache
def _cjk_names_re() -> re.Pattern[str]:
    names = sorted((n for n in TECH if re.search(r"[\u3400-\u9fff]", n)), key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in names) or r"(?!)")


def cjk_tech_names(text: str) -> list[tuple[str, int]]:
    """The lexicon's names written in Chinese script ("达梦", "人大金仓") in `text`, with where."""
    return [(m.group(0), m.start()) for m in _cjk_names_re().finditer(text)]


def lookup_tech(item: str) -> _Tech | None:
    """The known technology `item` names (any case; short forms give the full name; a version
    after the name is the same technology: "MySQL 8.0")."""
    tech = _lookup(item)
    if tech is None and item[-1:].isdigit():
        name, version = split_version(item)
        return _lookup(name) if version else None
    return tech


# Names that are also everyday English words when written in lowercase ("go with", "make sure").
_EVERYDAY_WORDS = frozenset(
    "go make swift dart express spring click echo fiber phoenix unity lambda helm arc edge brave"
    " warp kitty fish bun node cargo black linear teams zoom notion excel spark r c next rest"
    " remix astro bootstrap ember d3 git semaphore drone bamboo travis harness aurora spanner atom"
    " rider fleet kate rio opera mint concourse temporal luigi prefect eclipse"
    " terminator woodpecker informix percona".split()
)


def mentioned_tech(word: str) -> _Tech | None:
    """`lookup_tech` for a word of running English text: "go" and "make" are verbs there."""
    if word.islower() and word in _EVERYDAY_WORDS:
        return None
    return lookup_tech(word)


@functools.cache
def _lexer_names() -> frozenset[str]:
    # Pygments knows some 600 languages and formats by the names their users write them with;
    # sessions, templates and dumps are not languages one says one writes.
    from pygments.lexers import get_all_lexers

    noise = re.compile(
        r"[+/]|\b(?:session|console|objdump|template|output|log|file|dialect)\b", re.I
    )
    return frozenset(
        name for name, _aliases, patterns, _mimes in get_all_lexers(plugins=False)
        if patterns and len(name) > 1 and not noise.search(name)
    )  # fmt: skip


def is_language(item: str) -> bool:
    """Whether `item` is a programming language, written as its users write it ("Elixir")."""
    tech = lookup_tech(item)
    if tech is not None:
        return tech.category == "language"
    return item in _lexer_names()


def _leading_name(part: str) -> str:
    """The technology or proper noun a phrase starts with: "jest in all my projects" → "jest"."""
    words = part.split()
    for n in range(min(3, len(words)), 0, -1):
        head = " ".join(words[:n])
        if lookup_tech(head) is not None:
            return head
    if _PROPER_ITEM_RE.match(part):
        return part
    for n in range(min(3, len(words) - 1), 0, -1):
        head = " ".join(words[:n])
        if _PROPER_ITEM_RE.match(head) and _NAME_END_RE.match(words[n]):
            return head
    return part


def tech_items(raw: str) -> list[str]:
    """Split "React, TypeScript and Tauri" into names; keep only tools and proper nouns."""
    out: list[str] = []
    for part in _ITEM_SPLIT_RE.split(raw.strip()):
        item = part.strip()
        for _ in range(2):
            item = _ITEM_TRIM_RE.sub("", item).strip()
        item = clean(_leading_name(clean(item)))
        if not item or PRONOUN_START_RE.match(item):
            continue
        tech = lookup_tech(item)
        if tech is not None:
            aliased = item.lower() in _ALIASES
            out.append(item if item.lower() != item and not aliased else tech.name)
        elif _PROPER_ITEM_RE.match(item) and item.split()[0].lower() not in NOT_ORGS:
            out.append(item)
    return list(dict.fromkeys(out))


def tool_memories(
    items: Sequence[str],
    ctx: Ctx,
    *,
    render: Callable[[Sequence[str]], str],
    main: bool,
    switch: bool = False,
) -> Iterator[ExtractedMemory]:
    """One memory per single-valued tool (editor, test runner, …), one for the rest."""
    rest: list[str] = []
    for item in items:
        tech = lookup_tech(item)
        if tech is None or not (subject := tech.subject or _version_key(item)):
            rest.append(item)
            continue
        # "I'm on Python 3.9": the version a language runs at is a setting of the user's
        # environment, like their OS; the language itself is a skill.
        environment = tech.category == "language" and subject.startswith("version:")
        setting = tech.subject in _PREFERENCE_SUBJECTS
        preference = tech.category in _PREFERENCE_CATEGORIES or environment or setting
        type_ = "preference" if preference else "skill"
        importance = (
            IMP_SWITCH if switch else (IMP_TOOL_HABIT if type_ == "preference" else IMP_SKILL)
        )
        yield ctx.mem(render([item]), type_, importance, subject=subject)
    if not rest:
        return
    subject = ""
    if main and len(rest) == 1:
        subject = primary_key(rest[0])
    importance = IMP_SWITCH if switch else (IMP_SKILL_MAIN if main else IMP_SKILL)
    yield ctx.mem(render(rest), "skill", importance, subject=subject)


def primary_key(name: str) -> str:
    """The key of the user's main technology of `name`'s kind: `language:primary` for a
    language, `framework:frontend|backend` for a framework of one side; else "". One is the main
    one at a time, so "it's all Kotlin now" after "I mostly write Java" replaces it."""
    if is_language(name):
        return "language:primary"
    side = stack_side(name)
    return f"framework:{side}" if side else ""


def _version_key(item: str) -> str:
    """ "Python 3.9": one version of a tool is in use at a time, so a later one replaces it."""
    name, version = split_version(item)
    return f"version:{name.lower()}" if version else ""


def style_subject(obj: str) -> str:
    """The subject key of a preference: its working-style topic, or the tool it names."""
    if subject := style_topic(obj):
        return subject
    head = re.split(r"\s+(?:over|to|than|instead)\b", obj, maxsplit=1)[0]
    tech = lookup_tech(clean(head))
    return tech.subject if tech else ""
