// A builder form's estimate (the htmx fragment in #estimate). Asked again when the browser restores what
// was typed (back, reload: no input event fires then, so the form showed no estimate), and a request that
// fails says so in place of the estimate instead of leaving the last one, or nothing, standing.
(function () {
  const target = document.getElementById("estimate");
  if (!target) return;
  const form = target.closest("form");
  const typed = () => [...form.querySelectorAll('input[name$="_model"]')].some((el) => el.value.trim());
  window.addEventListener("pageshow", () => { if (typed()) htmx.trigger(form, "seats-changed"); });
  function failed(text) {
    const p = document.createElement("p");
    p.className = "error"; p.dataset.testid = "estimate-error"; p.textContent = text;
    target.replaceChildren(p);
  }
  form.addEventListener("htmx:responseError", (e) => {
    failed(`The estimate could not be made (the server answered ${e.detail.xhr.status}); reload the page, signing in again if asked.`);
  });
  form.addEventListener("htmx:sendError", () => failed("The estimate could not be asked: the server did not answer."));
})();
