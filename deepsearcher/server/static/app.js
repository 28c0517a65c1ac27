/* DeepSearcher web page: collections, loading jobs, streamed research with citations.
 * Plain browser JavaScript, no build step and nothing loaded from elsewhere.
 * API: GET v1/collections, POST v1/documents (multipart), POST v1/load, GET v1/jobs/{id},
 * POST v1/query (Server-Sent Events read through fetch, since EventSource cannot POST),
 * DELETE v1/collections/{name}, GET v1/collections/{name}/sources, DELETE v1/sources, GET health.
 * The session's questions (and answers) live in sessionStorage.
 * Every text from the server is escaped before it reaches the page. */
(function () {
  "use strict";

  const KEY_STORAGE = "deepsearcher.apiKey";
  const NEW_COLLECTION = "__new__";
  const HISTORY_STORAGE = "deepsearcher.history";
  const HISTORY_SIZE = 30;
  const FINISHED = new Set(["succeeded", "failed", "partial"]);
  const $ = (id) => document.getElementById(id);

  const state = {
    collections: [],
    files: [],
    abort: null,
    sources: new Map(),
    answerText: "",
    renderQueued: false,
    startedAt: 0,
    gotResult: false,
  };

  /* ------------------------------------------------------------------ helpers */

  function escapeHtml(text) {
    return String(text == null ? "" : text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function plural(n, word, many) {
    return n + " " + (n === 1 ? word : many || word + "s");
  }

  function basename(reference) {
    const clean = String(reference || "").replace(/[?#].*$/, "").replace(/\/+$/, "");
    const parts = clean.split(/[\\/]/);
    return parts[parts.length - 1] || reference || "";
  }

  function isHttp(reference) {
    return /^https?:\/\//i.test(String(reference || ""));
  }

  /* ------------------------------------------------------------------ API */

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function apiKey() {
    try {
      return localStorage.getItem(KEY_STORAGE) || "";
    } catch (_) {
      return "";
    }
  }

  function withAuth(headers) {
    const result = Object.assign({}, headers || {});
    const key = apiKey();
    if (key) result.Authorization = "Bearer " + key;
    return result;
  }

  async function errorFrom(response) {
    let message = "";
    try {
      const body = await response.json();
      message = body.error || body.detail || body.message || "";
      if (typeof message !== "string") message = JSON.stringify(message);
    } catch (_) {
      message = ""; // not JSON: the status line says what failed
    }
    return new ApiError(response.status, message || response.status + " " + response.statusText);
  }

  async function api(path, options) {
    const opts = Object.assign({}, options || {});
    opts.headers = withAuth(opts.headers);
    const response = await fetch(path, opts);
    if (!response.ok) throw await errorFrom(response);
    if (response.status === 204) return null;
    return response.json();
  }

  function explain(error) {
    if (error && error.name === "AbortError") return "Stopped.";
    if (error instanceof ApiError) {
      if (error.status === 401) {
        openKeyPanel();
        return "This server needs an API key (" + error.message + "). Paste it under “API key” at the top.";
      }
      if (error.status === 403) return "Refused: " + error.message;
      return error.message;
    }
    if (error instanceof TypeError) return "Cannot reach the server (" + error.message + ").";
    return String((error && error.message) || error);
  }

  /* ------------------------------------------------------------------ banner, key */

  function showBanner(message, kind) {
    const banner = $("banner");
    banner.textContent = "";
    banner.className = "banner " + (kind || "error");
    banner.appendChild(el("span", "", message));
    const close = el("button", "icon-button", "✕");
    close.type = "button";
    close.setAttribute("aria-label", "Dismiss");
    close.addEventListener("click", hideBanner);
    banner.appendChild(close);
    banner.hidden = false;
  }

  function hideBanner() {
    $("banner").hidden = true;
  }

  function openKeyPanel() {
    $("key-panel").hidden = false;
    $("key-toggle").setAttribute("aria-expanded", "true");
    $("api-key").focus();
  }

  function setupKey() {
    const input = $("api-key");
    input.value = apiKey();
    updateKeyButton();
    $("key-toggle").addEventListener("click", () => {
      const panel = $("key-panel");
      panel.hidden = !panel.hidden;
      $("key-toggle").setAttribute("aria-expanded", String(!panel.hidden));
      if (!panel.hidden) input.focus();
    });
    $("key-form").addEventListener("submit", (event) => {
      event.preventDefault();
      try {
        localStorage.setItem(KEY_STORAGE, input.value.trim());
      } catch (_) {
        showBanner("This browser does not allow storing the key (private mode?).");
      }
      updateKeyButton();
      $("key-panel").hidden = true;
      $("key-toggle").setAttribute("aria-expanded", "false");
      hideBanner();
      refreshCollections();
    });
    $("key-clear").addEventListener("click", () => {
      try {
        localStorage.removeItem(KEY_STORAGE);
      } catch (error) {
        console.debug("No stored key to remove: this browser does not allow storage.", error);
      }
      input.value = "";
      updateKeyButton();
    });
  }

  function updateKeyButton() {
    $("key-toggle").textContent = apiKey() ? "API key ✓" : "API key";
  }

  // The agent list comes from the server's registry: a new agent needs no change here.
  function fillAgents(agents, fallback) {
    const select = $("agent");
    if (!agents.length || select.dataset.filled) return;
    select.textContent = "";
    agents.forEach(function (agent) {
      const option = new Option(agent.label || agent.name, agent.name);
      option.title = agent.description || "";
      select.appendChild(option);
    });
    select.value = fallback || agents[0].name;
    select.dataset.filled = "1";
  }

  async function checkHealth() {
    const pill = $("server-status");
    try {
      const response = await fetch("health");
      const health = await response.json();
      if (health.status !== "ok") {
        pill.textContent = "starting…";
        pill.className = "pill warn";
        setTimeout(checkHealth, 1000);
        return;
      }
      if (health.llm_error) {
        pill.textContent = "LLM unreachable";
        pill.className = "pill bad";
        pill.title = "The last question failed at the LLM (" + (health.llm_provider || "LLM") + "): " + health.llm_error;
      } else if (health.llm === false) {
        pill.textContent = "no LLM: search & load only";
        pill.className = "pill warn";
        pill.title = "No LLM is configured on the server, so questions cannot be answered. Loading still works.";
      } else {
        pill.textContent = "ready";
        pill.className = "pill ok";
        pill.title = health.llm_provider ? "LLM: " + health.llm_provider : "Server status";
      }
      fillAgents(health.agents || [], health.default_agent);
      if (health.auth && !apiKey()) openKeyPanel();
    } catch (_) {
      pill.textContent = "offline";
      pill.className = "pill bad";
    }
  }

  /* ------------------------------------------------------------------ collections */

  async function refreshCollections() {
    try {
      state.collections = await api("v1/collections");
    } catch (error) {
      showBanner("Could not list collections: " + explain(error));
      return;
    }
    renderCollections();
  }

  function renderCollections() {
    const list = $("collection-list");
    const target = $("target-collection");
    const scope = $("scope");
    const previousTarget = target.value;
    const previousScope = scope.querySelector("select") ? scope.querySelector("select").value : "";
    list.textContent = "";
    $("collections-empty").hidden = state.collections.length > 0;

    for (const info of state.collections) {
      const item = el("li");
      const button = el("button", "collection");
      button.type = "button";
      button.dataset.name = info.name;
      button.appendChild(el("span", "collection-name", info.name));
      if (info.description) button.appendChild(el("span", "collection-desc", info.description));
      const meta = plural(info.sources || 0, "source") + (info.embedding_model ? " · " + info.embedding_model : "");
      button.appendChild(el("span", "collection-meta", meta));
      button.addEventListener("click", () => selectTarget(info.name));
      item.appendChild(button);
      item.appendChild(collectionActions(info));
      list.appendChild(item);
    }

    target.textContent = "";
    for (const info of state.collections) target.appendChild(new Option(info.name, info.name));
    target.appendChild(new Option("+ New collection…", NEW_COLLECTION));
    const names = state.collections.map((info) => info.name);
    target.value = names.includes(previousTarget) ? previousTarget : names.length ? names[0] : NEW_COLLECTION;
    onTargetChange();

    scope.textContent = "";
    const label = el("label", "inline", "Search in ");
    const select = document.createElement("select");
    select.id = "scope-select";
    select.appendChild(new Option("all (agent picks)", ""));
    for (const name of names) select.appendChild(new Option(name, name));
    select.value = names.includes(previousScope) ? previousScope : "";
    label.appendChild(select);
    scope.appendChild(label);
  }

  /** Under each collection: show its sources (each deletable) and drop it, after a confirm step. */
  function collectionActions(info) {
    const box = el("div", "collection-actions");
    box.dataset.name = info.name;
    const show = el("button", "ghost small show-sources", "Sources");
    show.type = "button";
    const drop = el("button", "ghost small drop-collection", "Drop…");
    drop.type = "button";
    const confirm = el("div", "confirm-drop");
    confirm.hidden = true;
    confirm.appendChild(el("span", "small", "Drop “" + info.name + "” and its " + plural(info.sources || 0, "source") + "?"));
    const yes = el("button", "danger small confirm-yes", "Drop");
    yes.type = "button";
    const no = el("button", "ghost small confirm-no", "Cancel");
    no.type = "button";
    confirm.appendChild(yes);
    confirm.appendChild(no);
    const sources = el("ul", "source-list");
    sources.hidden = true;
    show.addEventListener("click", () => {
      sources.hidden = !sources.hidden;
      if (!sources.hidden) listSources(info.name, sources);
    });
    drop.addEventListener("click", () => {
      confirm.hidden = false;
    });
    no.addEventListener("click", () => {
      confirm.hidden = true;
    });
    yes.addEventListener("click", () => dropCollection(info.name));
    box.appendChild(show);
    box.appendChild(drop);
    box.appendChild(confirm);
    box.appendChild(sources);
    return box;
  }

  async function dropCollection(name) {
    try {
      await api("v1/collections/" + encodeURIComponent(name), { method: "DELETE" });
    } catch (error) {
      showBanner("Could not drop " + name + ": " + explain(error));
      return;
    }
    showBanner("Dropped collection " + name + ".", "info");
    await refreshCollections();
  }

  async function listSources(name, list) {
    let rows;
    try {
      rows = await api("v1/collections/" + encodeURIComponent(name) + "/sources");
    } catch (error) {
      showBanner("Could not list the sources of " + name + ": " + explain(error));
      return;
    }
    list.textContent = "";
    if (!rows.length) list.appendChild(el("li", "muted small", "No sources."));
    for (const row of rows) {
      const item = el("li", "source-row");
      item.dataset.reference = row.reference;
      const label = el("span", "source-row-name", basename(row.reference));
      label.title = row.reference;
      item.appendChild(label);
      item.appendChild(el("span", "muted small", plural(row.chunks || 0, "chunk")));
      const remove = el("button", "icon-button delete-source", "✕");
      remove.type = "button";
      remove.title = "Delete this source from " + name;
      remove.setAttribute("aria-label", "Delete " + row.reference);
      remove.addEventListener("click", () => deleteSource(name, row.reference));
      item.appendChild(remove);
      list.appendChild(item);
    }
  }

  async function deleteSource(collection, reference) {
    try {
      await api("v1/sources", {
        method: "DELETE",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ collection: collection, reference: reference }),
      });
    } catch (error) {
      showBanner("Could not delete " + reference + ": " + explain(error));
      return;
    }
    await refreshCollections();
    const box = document.querySelector('#collection-list .collection-actions[data-name="' + CSS.escape(collection) + '"]');
    if (box) {
      const list = box.querySelector(".source-list");
      list.hidden = false;
      await listSources(collection, list);
    }
  }

  function selectTarget(name) {
    $("target-collection").value = name;
    onTargetChange();
  }

  function onTargetChange() {
    const value = $("target-collection").value;
    $("new-collection-fields").hidden = value !== NEW_COLLECTION;
    for (const button of document.querySelectorAll("#collection-list .collection")) {
      button.classList.toggle("selected", button.dataset.name === value);
    }
  }

  /** The collection new documents go to, and its description when it is new; null (and
   *  a banner saying why) while the new collection has no name. */
  function loadTarget() {
    const value = $("target-collection").value;
    if (value !== NEW_COLLECTION) return { collection: value, description: null };
    const name = $("new-collection-name").value.trim();
    if (!name) {
      $("new-collection-name").focus();
      showBanner("Give the new collection a name first.");
      return null;
    }
    return { collection: name, description: $("new-collection-desc").value.trim() || null };
  }

  /* ------------------------------------------------------------------ loading */

  function setupLoading() {
    $("target-collection").addEventListener("change", onTargetChange);
    for (const [tab, pane, other, otherPane] of [
      ["tab-files", "upload-form", "tab-urls", "url-form"],
      ["tab-urls", "url-form", "tab-files", "upload-form"],
    ]) {
      $(tab).addEventListener("click", () => {
        $(tab).classList.add("active");
        $(tab).setAttribute("aria-selected", "true");
        $(other).classList.remove("active");
        $(other).setAttribute("aria-selected", "false");
        $(pane).hidden = false;
        $(otherPane).hidden = true;
      });
    }

    const input = $("file-input");
    input.addEventListener("change", () => setFiles(Array.from(input.files || [])));
    const zone = $("dropzone");
    zone.addEventListener("dragover", (event) => {
      event.preventDefault();
      zone.classList.add("dragging");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("dragging");
      setFiles(Array.from((event.dataTransfer && event.dataTransfer.files) || []));
    });

    $("upload-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!state.files.length) return;
      const target = loadTarget();
      if (!target) return;
      const form = new FormData();
      for (const file of state.files) form.append("files", file, file.name);
      form.append("collection", target.collection);
      if (target.description) form.append("description", target.description);
      const label = (state.files.length === 1 ? state.files[0].name : plural(state.files.length, "file")) + " → " + target.collection;
      $("upload-button").disabled = true;
      try {
        const job = await api("v1/documents", { method: "POST", body: form });
        hideBanner();
        trackJob(job.job_id, label, target.collection);
        setFiles([]);
        input.value = "";
      } catch (error) {
        showBanner("Upload failed: " + explain(error));
        $("upload-button").disabled = false;
      }
    });

    $("url-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const inputs = $("url-input").value.split(/\s*\n\s*/).map((line) => line.trim()).filter(Boolean);
      if (!inputs.length) {
        $("url-input").focus();
        return;
      }
      const target = loadTarget();
      if (!target) return;
      const body = { inputs: inputs, collection: target.collection };
      if (target.description) body.description = target.description;
      const depth = parseInt($("max-depth").value, 10);
      if (depth > 0) body.max_depth = depth;
      const pages = parseInt($("max-pages").value, 10);
      if (pages > 0) body.max_pages = pages;
      const label = (inputs.length === 1 ? inputs[0] : plural(inputs.length, "input")) + " → " + target.collection;
      $("url-button").disabled = true;
      try {
        const job = await api("v1/load", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        hideBanner();
        $("url-input").value = "";
        trackJob(job.job_id, label, target.collection);
      } catch (error) {
        showBanner("Loading failed: " + explain(error));
      } finally {
        $("url-button").disabled = false;
      }
    });
  }

  function setFiles(files) {
    state.files = files;
    const list = $("file-names");
    list.textContent = "";
    for (const file of files) {
      const item = el("li", "", file.name);
      item.appendChild(el("span", "muted", " " + formatBytes(file.size)));
      list.appendChild(item);
    }
    $("upload-button").disabled = files.length === 0;
    $("upload-button").textContent = files.length > 1 ? "Upload " + files.length + " files and load" : "Upload and load";
  }

  function formatBytes(size) {
    if (size < 1024) return size + " B";
    if (size < 1024 * 1024) return (size / 1024).toFixed(1) + " KB";
    return (size / 1024 / 1024).toFixed(1) + " MB";
  }

  function trackJob(jobId, label, collection) {
    const item = el("li", "job");
    item.dataset.jobId = jobId;
    const head = el("div", "job-head");
    head.appendChild(el("span", "job-label", label));
    const status = el("span", "pill job-status", "queued");
    head.appendChild(status);
    item.appendChild(head);
    const bar = el("div", "progress");
    bar.appendChild(el("div", "progress-bar"));
    item.appendChild(bar);
    const detail = el("div", "job-detail muted small", "waiting to start…");
    item.appendChild(detail);
    $("job-list").prepend(item);
    pollJob(jobId, item, collection, 0);
  }

  async function pollJob(jobId, item, collection, failures) {
    let job;
    try {
      job = await api("v1/jobs/" + encodeURIComponent(jobId));
    } catch (error) {
      if (failures < 5 && !(error instanceof ApiError && error.status < 500)) {
        setTimeout(() => pollJob(jobId, item, collection, failures + 1), 1000 * (failures + 1));
        return;
      }
      renderJob(item, { status: "failed", error: explain(error), progress: {} });
      return;
    }
    renderJob(item, job);
    if (FINISHED.has(job.status)) {
      await refreshCollections();
      if ($("target-collection").value === NEW_COLLECTION && state.collections.some((c) => c.name === (job.collection || collection))) {
        $("new-collection-name").value = "";
        $("new-collection-desc").value = "";
        selectTarget(job.collection || collection);
      }
      $("upload-button").disabled = state.files.length === 0;
      return;
    }
    setTimeout(() => pollJob(jobId, item, collection, 0), 600);
  }

  function renderJob(item, job) {
    const status = item.querySelector(".job-status");
    status.textContent = job.status;
    status.className = "pill job-status " + ({ succeeded: "ok", partial: "warn", failed: "bad" }[job.status] || "busy");
    item.dataset.status = job.status;
    item.classList.toggle("running", !FINISHED.has(job.status));
    const progress = job.progress || {};
    const detail = item.querySelector(".job-detail");
    detail.textContent = "";
    const results = job.results;
    if (!FINISHED.has(job.status)) {
      detail.textContent = job.status === "queued" ? "waiting to start…"
        : plural(progress.sources_done || 0, "source") + " read · " + plural(progress.chunks_embedded || 0, "chunk") + " embedded";
      return;
    }
    item.querySelector(".progress").hidden = true;
    if (results) {
      const parts = [];
      const count = (key) => (Array.isArray(results[key]) ? results[key].length : results[key] || 0);
      if (count("loaded")) parts.push(count("loaded") + " loaded");
      if (count("replaced")) parts.push(count("replaced") + " replaced");
      if (count("skipped_unchanged")) parts.push(count("skipped_unchanged") + " unchanged");
      if (count("unsupported")) parts.push(count("unsupported") + " unsupported");
      if (count("failed")) parts.push(count("failed") + " failed");
      parts.push(plural(results.chunks_inserted || 0, "chunk") + " added");
      detail.appendChild(el("div", "", parts.join(" · ")));
      const failed = Array.isArray(results.failed) ? results.failed : [];
      if (failed.length) {
        const list = el("ul", "failures");
        for (const failure of failed) {
          const li = el("li");
          li.appendChild(el("strong", "", basename(failure.source)));
          li.appendChild(document.createTextNode(": " + failure.reason));
          li.title = failure.source;
          list.appendChild(li);
        }
        detail.appendChild(list);
      }
    } else if (job.error) {
      detail.appendChild(el("div", "error-text", job.error));
    }
  }

  /* ------------------------------------------------------------------ markdown */

  /** Inline markdown on already-escaped text: code, bold, italic, citations.
   *  Emphasis opens only before a non-space and closes only after one, not inside a word, as in
   *  CommonMark, and a Python dunder (`__enter__()`, `__init__`) stays as written: answers about
   *  code name identifiers without backticks, and `**kwargs` ... `g(**opts)` is not bold either. */
  function inline(escaped, clickable) {
    const codes = [];
    const keep = (code) => {
      codes.push(code);
      return "\u0000" + (codes.length - 1) + "\u0000";
    };
    let text = escaped.replace(/`([^`]+)`/g, (_, code) => keep("<code>" + code + "</code>"));
    text = text.replace(/(^|[^\w])(__[A-Za-z]\w*?__)(?!\w)/g, (_, before, name) => before + keep(name));
    text = text
      .replace(/(^|[^*\w])\*\*(?=\S)([^*]*?\S)\*\*(?![*\w])/g, "$1<strong>$2</strong>")
      .replace(/(^|[^_\w])__(?=\S)([^_]*?\S)__(?![_\w])/g, "$1<strong>$2</strong>")
      .replace(/(^|[^*\w])\*(?=[^*\s])([^*]*?[^*\s])\*(?![*\w])/g, "$1<em>$2</em>");
    text = text.replace(/\[(\d+(?:\s*,\s*\d+)*)\]/g, (_, group) => {
      const numbers = group.split(/\s*,\s*/).map((n) => parseInt(n, 10));
      return "<sup class=\"cites\">" + numbers.map((n) => citation(n, clickable)).join("") + "</sup>";
    });
    return text.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
  }

  function citation(n, clickable) {
    if (clickable && state.sources.has(n)) {
      const source = state.sources.get(n);
      const title = escapeHtml(source.title || basename(source.reference));
      return "<button type=\"button\" class=\"cite\" data-index=\"" + n + "\" title=\"" + title + "\">" + n + "</button>";
    }
    return "<span class=\"cite pending\">" + n + "</span>";
  }

  /** Safe HTML for an answer: the text is escaped first, then a small markdown subset applied. */
  function renderMarkdown(text, clickable) {
    const lines = escapeHtml(text).split(/\r?\n/);
    const html = [];
    let paragraph = [];
    let list = null;
    let code = null;

    const flushParagraph = () => {
      if (paragraph.length) html.push("<p>" + paragraph.map((line) => inline(line, clickable)).join("<br>") + "</p>");
      paragraph = [];
    };
    const flushList = () => {
      if (list) html.push("<" + list.tag + ">" + list.items.map((item) => "<li>" + inline(item, clickable) + "</li>").join("") + "</" + list.tag + ">");
      list = null;
    };

    for (const line of lines) {
      if (code !== null) {
        if (/^\s*```/.test(line)) {
          html.push("<pre><code>" + code.join("\n") + "</code></pre>");
          code = null;
        } else {
          code.push(line);
        }
        continue;
      }
      if (/^\s*```/.test(line)) {
        flushParagraph();
        flushList();
        code = [];
        continue;
      }
      if (!line.trim()) {
        flushParagraph();
        flushList();
        continue;
      }
      const heading = /^\s*(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        flushParagraph();
        flushList();
        const level = Math.min(6, heading[1].length + 2);
        html.push("<h" + level + ">" + inline(heading[2], clickable) + "</h" + level + ">");
        continue;
      }
      const bullet = /^\s*[-*+•]\s+(.*)$/.exec(line);
      const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
      if (bullet || numbered) {
        flushParagraph();
        const tag = bullet ? "ul" : "ol";
        if (!list || list.tag !== tag) {
          flushList();
          list = { tag: tag, items: [] };
        }
        list.items.push((bullet || numbered)[1]);
        continue;
      }
      if (list && /^\s{2,}\S/.test(line)) {
        list.items[list.items.length - 1] += " " + line.trim();
        continue;
      }
      flushList();
      paragraph.push(line);
    }
    if (code !== null) html.push("<pre><code>" + code.join("\n") + "</code></pre>");
    flushParagraph();
    flushList();
    return html.join("");
  }

  /* ------------------------------------------------------------------ query */

  function setupQuery() {
    $("ask-form").addEventListener("submit", (event) => {
      event.preventDefault();
      ask();
    });
    $("question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!state.abort) ask();
      }
    });
    $("stop-button").addEventListener("click", () => {
      if (state.abort) state.abort.abort();
    });
    $("answer").addEventListener("click", onCitationClick);
    $("sources").addEventListener("click", (event) => {
      const item = event.target.closest("[data-index]");
      if (item) openSource(Number(item.dataset.index));
    });
    $("source-panel-close").addEventListener("click", closeSource);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") closeSource();
    });
  }

  async function ask() {
    const question = $("question").value.trim();
    if (!question) {
      $("question").focus();
      return;
    }
    const body = { question: question };
    if ($("agent").value) body.agent = $("agent").value;
    const maxIter = parseInt($("max-iter").value, 10);
    if (maxIter > 0) body.max_iter = maxIter;
    if ($("web") && $("web").value) body.web = $("web").value;
    const scope = $("scope-select") ? $("scope-select").value : "";
    if (scope) body.collections = [scope];

    startRun();
    const controller = new AbortController();
    state.abort = controller;
    try {
      const response = await fetch("v1/query", {
        method: "POST",
        headers: withAuth({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) throw await errorFrom(response);
      const type = response.headers.get("content-type") || "";
      if (type.includes("application/json")) {
        onResult(await response.json());
      } else {
        await readEvents(response, onEvent);
      }
      if (!state.gotResult && !controller.signal.aborted) {
        failRun("The connection closed before the answer was complete.");
      }
    } catch (error) {
      failRun(explain(error));
    } finally {
      state.abort = null;
      $("ask-button").disabled = false;
      $("stop-button").hidden = true;
      remember({ question: question, agent: body.agent || "", collection: scope, result: state.lastResult });
      checkHealth(); // the pill says whether the LLM answered
    }
  }

  /* ------------------------------------------------------------------ history */

  function loadHistory() {
    try {
      return JSON.parse(sessionStorage.getItem(HISTORY_STORAGE) || "[]");
    } catch (_) {
      return [];
    }
  }

  /** Keep this browser session's questions (newest first, one entry per question) with their answer. */
  function remember(entry) {
    const history = loadHistory().filter((old) => old.question !== entry.question);
    history.unshift(entry);
    try {
      sessionStorage.setItem(HISTORY_STORAGE, JSON.stringify(history.slice(0, HISTORY_SIZE)));
    } catch (_) {
      sessionStorage.setItem(HISTORY_STORAGE, JSON.stringify([{ question: entry.question }])); // too big: drop answers
    }
    renderHistory();
  }

  function renderHistory() {
    const list = $("history-list");
    const history = loadHistory();
    list.textContent = "";
    $("history-card").hidden = history.length === 0;
    history.forEach((entry, position) => {
      const item = el("li", "history-item");
      item.dataset.question = entry.question;
      const again = el("button", "history-question", entry.question);
      again.type = "button";
      again.title = "Ask again";
      again.addEventListener("click", () => reAsk(entry));
      item.appendChild(again);
      if (entry.result) {
        const show = el("button", "ghost small history-show", "Show");
        show.type = "button";
        show.title = "Show the answer again without asking";
        show.addEventListener("click", () => showAgain(loadHistory()[position]));
        item.appendChild(show);
      }
      list.appendChild(item);
    });
  }

  function reAsk(entry) {
    $("question").value = entry.question;
    if (entry.agent !== undefined && [...$("agent").options].some((o) => o.value === entry.agent)) $("agent").value = entry.agent;
    const scope = $("scope-select");
    if (scope && [...scope.options].some((o) => o.value === (entry.collection || ""))) scope.value = entry.collection || "";
    if (!state.abort) ask();
  }

  function showAgain(entry) {
    if (!entry || !entry.result) return;
    $("question").value = entry.question;
    startRun();
    onResult(entry.result);
    for (const step of entry.result.steps || []) addStep(step);
    $("ask-button").disabled = false;
    $("stop-button").hidden = true;
    setRunStatus("from history", "ok");
  }

  /** Read a text/event-stream body frame by frame and hand each event to `handle`. */
  async function readEvents(response, handle) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const dispatch = (frame) => {
      let name = "message";
      const data = [];
      for (const line of frame.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
      if (!data.length) return;
      let payload;
      try {
        payload = JSON.parse(data.join("\n"));
      } catch (_) {
        payload = { text: data.join("\n") };
      }
      handle(name, payload);
    };
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      buffer = buffer.replace(/\r\n|\r(?!$)/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    buffer += decoder.decode();
    if (buffer.trim()) dispatch(buffer.replace(/\r\n?/g, "\n"));
  }

  function onEvent(name, data) {
    if (name === "step") addStep(data);
    else if (name === "token") onToken(data.token || "");
    else if (name === "result") onResult(data);
    else if (name === "error") failRun(data.message || "The query failed.");
  }

  function startRun() {
    hideBanner();
    closeSource();
    state.sources = new Map();
    state.answerText = "";
    state.gotResult = false;
    state.lastResult = null;
    state.startedAt = Date.now();
    $("welcome").hidden = true;
    $("run").hidden = false;
    $("steps").textContent = "";
    $("answer-card").hidden = true;
    $("answer").textContent = "";
    $("answer").classList.remove("streaming");
    $("usage").textContent = "";
    $("sources").textContent = "";
    $("sources-block").hidden = true;
    $("answer-agent").textContent = "";
    setRunStatus("researching…", "busy");
    $("ask-button").disabled = true;
    $("stop-button").hidden = false;
  }

  function setRunStatus(text, kind) {
    const pill = $("run-status");
    pill.textContent = text;
    pill.className = "pill " + (kind || "");
  }

  function failRun(message) {
    if (state.gotResult) return;
    setRunStatus(message === "Stopped." ? "stopped" : "failed", message === "Stopped." ? "warn" : "bad");
    const item = el("li", "step step-error");
    item.appendChild(el("span", "step-kind", message === "Stopped." ? "Stopped" : "Error"));
    item.appendChild(el("span", "step-text", message));
    $("steps").appendChild(item);
    $("answer").classList.remove("streaming");
  }

  /** How a step reads comes with it from the server (deepsearcher/agent/events.py), the words the CLI prints. */
  function describeStep(step) {
    const view = step.view || {};
    return { label: view.label || step.kind, text: view.text || "", quote: view.quote || "", list: view.items || [] };
  }

  function addStep(step) {
    const item = el("li", "step step-" + step.kind);
    item.dataset.kind = step.kind;
    const info = describeStep(step);
    item.appendChild(el("span", "step-kind", info.label));
    const body = el("span", "step-text");
    if (info.quote) body.appendChild(el("q", "", info.quote));
    if (info.text) body.appendChild(document.createTextNode((info.quote ? " " : "") + info.text));
    if (info.list && info.list.length) {
      const list = el("ul", "step-list");
      for (const entry of info.list) list.appendChild(el("li", "", entry));
      body.appendChild(list);
    }
    item.appendChild(body);
    const meta = el("span", "step-meta");
    if (step.iteration) meta.appendChild(el("span", "iteration", "round " + step.iteration));
    const at = typeof step.at === "number" ? step.at * 1000 : Date.now();
    meta.appendChild(el("span", "elapsed", "+" + Math.max(0, (at - state.startedAt) / 1000).toFixed(1) + " s"));
    item.appendChild(meta);
    $("steps").appendChild(item);
    if (step.kind === "answer") setRunStatus("answer ready", "ok");
  }

  function onToken(token) {
    if (!state.answerText) {
      $("answer-card").hidden = false;
      $("answer").classList.add("streaming");
      setRunStatus("writing the answer…", "busy");
    }
    state.answerText += token;
    if (!state.renderQueued) {
      state.renderQueued = true;
      requestAnimationFrame(() => {
        state.renderQueued = false;
        if (!state.gotResult) $("answer").innerHTML = renderMarkdown(state.answerText, false);
      });
    }
  }

  function onResult(result) {
    state.gotResult = true;
    state.lastResult = result;
    state.sources = new Map((result.sources || []).map((source) => [source.index, source]));
    $("answer-card").hidden = false;
    const answer = $("answer");
    answer.classList.remove("streaming");
    answer.innerHTML = renderMarkdown(result.answer || "", true);
    $("answer-agent").textContent = result.agent || "";
    setRunStatus("done", "ok");

    const usage = result.usage || {};
    const usageBox = $("usage");
    usageBox.textContent = "";
    const stats = [
      ["time", (result.wall_seconds || 0).toFixed(1) + " s"],
      ["tokens", String(usage.total_tokens || 0)],
      ["prompt", String(usage.prompt_tokens || 0)],
      ["completion", String(usage.completion_tokens || 0)],
      ["LLM calls", String(usage.calls || 0)],
    ];
    for (const [label, value] of stats) {
      const stat = el("span", "stat");
      stat.appendChild(el("span", "stat-value", value));
      stat.appendChild(el("span", "stat-label", label));
      usageBox.appendChild(stat);
    }
    if (result.stopped_by_budget) usageBox.appendChild(el("span", "pill warn", "stopped by token budget"));

    const list = $("sources");
    list.textContent = "";
    const sources = (result.sources || []).slice().sort((a, b) => Number(b.cited) - Number(a.cited) || a.index - b.index);
    for (const source of sources) {
      const item = el("li", "source" + (source.cited ? " cited" : ""));
      item.dataset.index = source.index;
      item.tabIndex = 0;
      item.setAttribute("role", "button");
      item.appendChild(el("span", "cite-badge", String(source.index)));
      const text = el("span", "source-text");
      text.appendChild(el("span", "source-title", source.title || basename(source.reference)));
      const ref = el("span", "source-ref");
      ref.appendChild(el("span", "", source.reference));
      text.appendChild(ref);
      item.appendChild(text);
      if (source.cited) item.appendChild(el("span", "pill subtle", "cited"));
      item.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          openSource(source.index);
        }
      });
      list.appendChild(item);
    }
    $("sources-block").hidden = sources.length === 0;
  }

  /* ------------------------------------------------------------------ sources */

  function onCitationClick(event) {
    const button = event.target.closest("button.cite");
    if (button) openSource(Number(button.dataset.index));
  }

  function openSource(index) {
    const source = state.sources.get(index);
    if (!source) return;
    $("source-panel-index").textContent = String(index);
    $("source-panel-name").textContent = source.title || basename(source.reference);
    const ref = $("source-panel-reference");
    ref.textContent = "";
    if (isHttp(source.reference)) {
      const link = el("a", "", source.reference);
      link.href = source.reference;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      ref.appendChild(link);
    } else {
      ref.appendChild(el("code", "", source.reference));
    }
    const where = source.page != null ? "p. " + source.page : (source.section ? "§ " + source.section : "");
    if (where) ref.appendChild(el("span", "source-where", " · " + where));
    showQuoted($("source-panel-text"), source.text || "", source.quote || "");
    $("source-panel").hidden = false;
    document.body.classList.add("panel-open");
    for (const node of document.querySelectorAll("[data-index]")) {
      node.classList.toggle("active", Number(node.dataset.index) === index);
    }
  }

  /** The source's text with the quote that supports the answer highlighted (and scrolled to). */
  function showQuoted(box, text, quote) {
    box.textContent = "";
    const at = quote ? text.indexOf(quote) : -1;
    if (at < 0) {
      box.textContent = text;
      return;
    }
    box.appendChild(document.createTextNode(text.slice(0, at)));
    const mark = el("mark", "quote", quote);
    box.appendChild(mark);
    box.appendChild(document.createTextNode(text.slice(at + quote.length)));
    mark.scrollIntoView({ block: "nearest" });
  }

  function closeSource() {
    $("source-panel").hidden = true;
    document.body.classList.remove("panel-open");
    for (const node of document.querySelectorAll("[data-index].active")) node.classList.remove("active");
  }

  /* ------------------------------------------------------------------ start */

  setupKey();
  setupLoading();
  setupQuery();
  $("refresh-collections").addEventListener("click", refreshCollections);
  checkHealth();
  refreshCollections();
  renderHistory();

  // For tests and the curious: the pure helpers.
  window.DeepSearcherPage = { renderMarkdown: renderMarkdown, escapeHtml: escapeHtml };
})();
