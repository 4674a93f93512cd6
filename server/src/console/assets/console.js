// Stageline console: progressive enhancement only (every page works without this file).
// - Copy buttons: a <button class="copy-button" data-copy-target="ID" hidden> copies the value of the element ID.
// - The error summary of a re-rendered form gets focus, so screen readers announce it (GOV.UK pattern).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button.copy-button[data-copy-target]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target || !navigator.clipboard) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      var value = "value" in target ? target.value : target.textContent;
      navigator.clipboard.writeText(value).then(
        function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = label; }, 2000);
        },
        function () {
          target.focus();
          if (target.select) target.select();
        }
      );
    });
  });
  var summary = document.querySelector(".error-summary");
  if (summary) summary.focus();
});
