// The run builder's seat rows: add up to the plan's seat limit, remove any; rows are renumbered so the
// form always posts seat0.. seatN-1, and the estimate is asked again after each change. A row is named by
// its 0-based index, as the API's `seat` and a refusal's roster[N] name it.
(function () {
  const body = document.getElementById("seat-rows");
  if (!body) return;
  const form = body.closest("form");
  const max = parseInt(body.dataset.max, 10);
  const add = document.getElementById("add-seat");
  const template = document.getElementById("seat-row-template");

  function renumber() {
    body.querySelectorAll("tr").forEach((row, k) => {
      row.querySelector(".seat-number").textContent = k;
      row.querySelectorAll("[data-field]").forEach((el) => {
        el.name = "seat" + k + "_" + el.dataset.field;
        el.setAttribute("aria-label", "Seat " + k + " " + el.dataset.label);
      });
      row.querySelector(".remove-seat").setAttribute("aria-label", "Remove seat " + k);
    });
    const n = body.querySelectorAll("tr").length;
    add.disabled = n >= max;
    document.getElementById("seat-count").textContent = n + " of at most " + max + " seats";
  }

  add.addEventListener("click", () => {
    if (body.querySelectorAll("tr").length >= max) return;
    body.appendChild(template.content.firstElementChild.cloneNode(true));
    renumber();
    htmx.trigger(form, "seats-changed");
  });
  body.addEventListener("click", (e) => {
    if (!e.target.classList.contains("remove-seat")) return;
    e.target.closest("tr").remove();
    renumber();
    htmx.trigger(form, "seats-changed");
  });
  // a model picked from the list brings its provider, where none is typed yet
  body.addEventListener("change", (e) => {
    if (e.target.dataset.field !== "model") return;
    const option = [...document.querySelectorAll("#models option")].find((o) => o.value === e.target.value);
    const provider = e.target.closest("tr").querySelector('[data-field="provider"]');
    if (option && !provider.value) provider.value = option.dataset.provider;
  });
  // the season's default is the chosen scenario's
  const scenario = document.getElementById("run-scenario"), ticks = document.getElementById("run-ticks");
  const showTicks = () => { ticks.placeholder = scenario.selectedOptions[0]?.dataset.ticks || ""; };
  scenario.addEventListener("change", showTicks);
  showTicks();
  renumber();
})();
