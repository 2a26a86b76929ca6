"""Read the new-experiment form (and the answers-file upload, which posts the same fields).

Turns the submitted fields into an ``ExperimentRequest``: datasets (``name@version``), web
services (numbered name/URL rows), built-in systems, answers files (numbered file/name/dataset
rows; each file is saved under ``<data dir>/uploads/<random>/`` because the runner re-reads it
on ``resume``), languages, profiles, the knowledge base (a loaded KB name or a SPARQL endpoint
URL; empty: the server's ``evaluation.kb``), whether answers-file ids the dataset lacks are
refused (else ``evaluation.strict_ids`` decides; ignored ids come back as warnings), owner and the
publish flag. Field-level mistakes raise
``FormError`` (400); whether the systems, datasets and files fit together is checked by the
runner at submission (``plan_experiment``), before anything is stored.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from werkzeug.datastructures import FileStorage, ImmutableMultiDict, MultiDict
from werkzeug.utils import secure_filename

from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.knowledge.endpoint import is_endpoint
from evaluators.systems.protocol import SystemKind
from store.permissions import PRIVATE_FILE, private_directory, private_file

SERVICE_ROWS = 3
ANSWER_ROWS = 3
MAX_NAME = 80
MAX_KB = 2000
# The protocols a web service row may speak (the form's values).
_PROTOCOLS = {"gerbil": SystemKind.WEB_SERVICE, "text2sparql": SystemKind.TEXT2SPARQL}
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
_SPLIT = re.compile(r"[\s,;]+")

Form = MultiDict[str, str] | ImmutableMultiDict[str, str]
Files = MultiDict[str, FileStorage] | ImmutableMultiDict[str, FileStorage]


class FormError(ValueError):
    """A form field that is missing or malformed (answered with 400 and the form again)."""


@dataclass(frozen=True, slots=True)
class ParsedForm:
    """A submitted form: the request to run and the directory its uploaded files went to."""

    request: ExperimentRequest
    upload_dir: Path | None

    def discard(self) -> None:
        """Remove the uploaded files (the submission was refused)."""
        if self.upload_dir is not None:
            shutil.rmtree(self.upload_dir, ignore_errors=True)


def _name(text: str, what: str) -> str:
    name = text.strip()
    if len(name) > MAX_NAME:
        raise FormError(f"The {what} {name[:40]!r}… is longer than {MAX_NAME} characters.")
    return name


def languages(text: str) -> tuple[str, ...]:
    """Return the language codes of a field such as ``"en, de"`` (default ``en``).

    >>> languages("en, de"), languages("")
    (('en', 'de'), ('en',))

    Raises:
        FormError: for something that is not a language code.
    """
    codes = [c for c in _SPLIT.split(text.strip()) if c]
    for code in codes:
        if not _LANGUAGE.fullmatch(code):
            raise FormError(f"{code[:20]!r} is not a language code such as en, de or pt-BR.")
    return tuple(dict.fromkeys(codes)) or ("en",)


def _kb(text: str, configured: str) -> str | None:
    """Return the knowledge base a form names (``None``: the server's ``evaluation.kb``).

    A form may name a knowledge base loaded into the store, or the endpoint the operator
    configured (``evaluation.kb``), never another URL: the server would send SPARQL to
    whatever address the form gave (issue 41), its own network included.
    """
    spec = text.strip()
    if len(spec) > MAX_KB:
        raise FormError(f"The knowledge base {spec[:40]!r}… is longer than {MAX_KB} characters.")
    if is_endpoint(spec) and spec.rstrip("/") != configured.strip().rstrip("/"):
        raise FormError(
            "The knowledge base must be one loaded on this server (qabench kb load) or its "
            f"configured endpoint, not another URL ({spec[:60]!r}); the command line "
            "(qabench experiment run --kb URL) may name any endpoint."
        )
    return spec or None


def _services(form: Form) -> list[SystemRequest]:
    found = []
    for n in range(1, SERVICE_ROWS + 1):
        name = _name(form.get(f"service_name_{n}", ""), "system name")
        url = form.get(f"service_url_{n}", "").strip()
        if not name and not url:
            continue
        if not name or not url:
            raise FormError(f"Web service row {n} needs both a name and a URL.")
        protocol = form.get(f"service_kind_{n}", "gerbil").strip() or "gerbil"
        if protocol not in _PROTOCOLS:
            raise FormError(f"Web service row {n}: the protocol is GERBIL QA or TEXT2SPARQL API.")
        found.append(SystemRequest(name, _PROTOCOLS[protocol], url=url))
    return found


def _save(upload: FileStorage, folder: Path) -> Path:
    filename = secure_filename(upload.filename or "") or "answers.json"
    private_directory(folder)
    path = folder / filename
    # Created owner-only before anything is written (answers of private experiments).
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "wb") as fh:
        upload.save(fh)
    return private_file(path)


def _answers(form: Form, files: Files, root: Path) -> tuple[list[SystemRequest], Path | None]:
    found: list[SystemRequest] = []
    folder: Path | None = None
    for n in range(1, ANSWER_ROWS + 1):
        upload = files.get(f"answers_file_{n}")
        if upload is None or not upload.filename:
            continue
        if folder is None:
            folder = root / secrets.token_hex(8)
        path = _save(upload, folder / str(n))
        name = _name(form.get(f"answers_name_{n}", ""), "system name") or Path(path).stem
        dataset = form.get(f"answers_dataset_{n}", "").strip() or None
        found.append(
            SystemRequest(name, SystemKind.ANSWER_FILE, answers_path=path, answers_dataset=dataset)
        )
    return found, folder


def read_experiment_form(
    form: Form, files: Files, upload_root: Path, default_profile: str, configured_kb: str = ""
) -> ParsedForm:
    """Return the experiment request a submitted form describes.

    Args:
        form: the form fields.
        files: the uploaded files.
        upload_root: where answers files are kept (``<data dir>/uploads``).
        default_profile: the profile used when none is ticked.
        configured_kb: ``evaluation.kb``, the one endpoint a form may name.

    Raises:
        FormError: when a field is missing or malformed; uploaded files are removed then.
    """
    folder: Path | None = None
    try:
        datasets = tuple(d.strip() for d in form.getlist("dataset") if d.strip())
        if not datasets:
            raise FormError("Choose at least one dataset.")
        # Tasks are numbered as on the command line: web services, answers files, built-ins.
        systems = _services(form)
        answers, folder = _answers(form, files, upload_root)
        systems += answers
        systems += [
            SystemRequest(b, SystemKind.BUILT_IN, builtin=b)
            for b in dict.fromkeys(x.strip() for x in form.getlist("builtin") if x.strip())
        ]
        if not systems:
            raise FormError("Add at least one system: a web service, a built-in or a file.")
        profiles = tuple(dict.fromkeys(p for p in form.getlist("profile") if p))
        request = ExperimentRequest(
            systems=tuple(systems),
            datasets=datasets,
            languages=languages(form.get("languages", "")),
            profiles=profiles or (default_profile,),
            owner=_name(form.get("owner", ""), "owner"),
            publish=form.get("publish", "") in ("1", "on", "true", "yes"),
            kb=_kb(form.get("kb", ""), configured_kb),
            # ticked: refuse answers files with ids their dataset lacks; else the setting
            strict_ids=True if form.get("strict_ids", "") in ("1", "on", "true") else None,
        )
    except FormError:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return ParsedForm(request, folder)
