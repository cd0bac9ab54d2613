// The reference's search (render/documents/reference_site.py): the prebuilt index in window.SEARCH_INDEX, read in the
// page, no server. Each word of the query must match an entry's id, meaning, symbols, models, notes and derivation, or
// plain-text form; a query written as a monomial (12lh: a coefficient and symbol names in any order) also matches a term of the expansion.
(function () {
  "use strict";
  const box = document.getElementById("search");
  const list = document.getElementById("results");
  const MOST = 20;

  function words(text) { return text.toLowerCase().replace(/[._\-/,;:()]+/g, " ").trim(); }

  function monomial(query) {  // "12lh" -> {coefficient: "12", letters: "hl"}; null unless it reads as one
    const found = /^(\d*)([a-z_]+)$/i.exec(query.replace(/[\s*·]/g, ""));
    if (!found || !found[1]) return null;
    return {coefficient: found[1], letters: found[2].split("").sort().join("")};
  }

  function termMatch(entry, wanted) {  // a term whose coefficient is the query's and whose symbol names spell its letters
    for (const term of entry.terms) {
      const [coefficient, names] = term.split(":");
      if (coefficient === wanted.coefficient && names.replace(/ /g, "").split("").sort().join("") === wanted.letters) {
        return entry.terms.length === 1 ? 3 : 2;
      }
    }
    return 0;
  }

  function prepared(entry) {
    if (!entry.haystack) {
      entry.haystack = {
        id: words(entry.id), meaning: words(entry.meaning), title: words(entry.title),
        symbols: entry.symbols.map(function (s) { return s.toLowerCase(); }),
        models: words(entry.models.join(" ")), about: words(entry.about), text: entry.text.toLowerCase(),
      };
    }
    return entry.haystack;
  }

  function score(entry, query, tokens, wanted) {
    const hay = prepared(entry);
    let total = 0;
    if (wanted) total += 40 * termMatch(entry, wanted);
    const typed = query.trim().toLowerCase();  // a symbol as printed (Ψ_emb) or named (d_ff), whole
    const symbolHit = entry.symbol.toLowerCase() === typed ? 35 : hay.symbols.includes(typed) ? 10 : 0;
    total += symbolHit;
    const phrase = words(query);
    if (tokens.length > 1 && (" " + hay.id + " ").includes(" " + phrase + " ")) total += 30;
    if (tokens.length > 1 && hay.meaning.includes(phrase)) total += 15;
    let everyWord = true;
    for (const token of tokens) {
      let best = 0;
      if ((" " + hay.id + " ").includes(" " + token + " ")) best = Math.max(best, 12);
      else if (hay.id.includes(token)) best = Math.max(best, 8);
      if (hay.title.includes(token)) best = Math.max(best, 7);
      if (hay.meaning.includes(token)) best = Math.max(best, 5);
      if (hay.symbols.includes(token)) best = Math.max(best, 6);
      if (hay.models.includes(token)) best = Math.max(best, 4);
      if (hay.about.includes(token)) best = Math.max(best, 3);
      if (hay.text.includes(token)) best = Math.max(best, 2);
      if (best === 0) everyWord = false;
      total += best;
    }
    if (!everyWord && !symbolHit && !(wanted && termMatch(entry, wanted))) return 0;
    return total - entry.id.length / 1000;  // ties: the shorter id, the more general formula, first
  }

  function search(query) {
    const index = window.SEARCH_INDEX || [];
    const tokens = words(query).split(" ").filter(Boolean);
    if (!tokens.length) return [];
    const wanted = monomial(query);
    return index.map(function (entry) { return [score(entry, query, tokens, wanted), entry]; })
      .filter(function (pair) { return pair[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0]; })
      .slice(0, MOST).map(function (pair) { return pair[1]; });
  }

  function show(query) {
    list.textContent = "";
    if (!query.trim()) { list.hidden = true; return; }
    const found = search(query);
    if (!found.length) {
      const none = document.createElement("li");
      none.className = "none";
      none.textContent = "no formula matches";
      list.appendChild(none);
    }
    for (const entry of found) {
      const item = document.createElement("li");
      const a = document.createElement("a");
      a.href = entry.href;
      a.dataset.id = entry.id;
      const id = document.createElement("code");
      id.textContent = entry.id;
      const why = document.createElement("span");
      why.className = "why";
      why.textContent = entry.title;
      a.append(id, why);
      item.appendChild(a);
      list.appendChild(item);
    }
    list.hidden = false;
  }

  window.referenceSearch = search;
  box.addEventListener("input", function () { show(box.value); });
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { const first = list.querySelector("a"); if (first) window.location.href = first.href; }
    if (event.key === "Escape") { box.value = ""; show(""); }
  });
  document.addEventListener("click", function (event) { if (!event.target.closest(".search")) list.hidden = true; });
})();
