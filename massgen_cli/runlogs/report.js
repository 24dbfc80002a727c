// The run report's one behaviour: an item of a timeline, clicked or chosen with Enter, shows a copy of
// its content (a hidden section the page holds) in the side panel. No markup is built from text here.
(function () {
  "use strict";
  var panel = document.getElementById("detail");
  var selected = null;

  function show(item) {
    var source = document.getElementById(item.getAttribute("data-detail"));
    if (!source) {
      return;
    }
    if (selected) {
      selected.classList.remove("selected");
    }
    selected = item;
    item.classList.add("selected");
    var copy = source.cloneNode(true);
    copy.removeAttribute("id");
    panel.replaceChildren(copy);
    panel.setAttribute("data-shown", item.getAttribute("data-detail"));
  }

  function itemOf(target) {
    return target && target.closest ? target.closest(".item") : null;
  }

  document.addEventListener("click", function (event) {
    var item = itemOf(event.target);
    if (item) {
      show(item);
    }
  });
  document.addEventListener("keydown", function (event) {
    var item = itemOf(event.target);
    if (item && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      show(item);
    }
  });
  // Print shows what is folded on screen, and the screen gets its folds back afterwards.
  var unfolded = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (folded) {
      folded.open = true;
      unfolded.push(folded);
    });
  });
  window.addEventListener("afterprint", function () {
    unfolded.forEach(function (folded) {
      folded.open = false;
    });
    unfolded = [];
  });
})();
