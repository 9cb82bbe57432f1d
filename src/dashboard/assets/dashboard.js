// Mailroom dashboard: refreshes the parts of a page marked data-refresh by fetching their
// server-rendered HTML and swapping it in, and sends a form marked data-submit-once once (a
// double click on "Add endpoint" would otherwise show the second answer, not the one with
// the secret). No library: this is all the page's script does, and every page works
// without it.
(function () {
  'use strict';
  function refresh(element) {
    var url = element.getAttribute('data-refresh');
    var every = Number(element.getAttribute('data-refresh-ms')) || 5000;
    function tick() {
      if (document.hidden) return schedule();
      fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' }, redirect: 'manual' })
        .then(function (response) {
          // The session ended: a reload lands on the login page.
          if (response.status === 401 || response.type === 'opaqueredirect') return location.reload();
          if (!response.ok) return schedule();
          return response.text().then(function (html) {
            element.innerHTML = html;
            element.setAttribute('data-refreshed-at', new Date().toISOString());
            schedule();
          });
        })
        .catch(schedule);
    }
    function schedule() {
      setTimeout(tick, every);
    }
    schedule();
  }
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute('data-submit-once')) return;
    if (form.getAttribute('data-submitted') === 'true') return event.preventDefault();
    form.setAttribute('data-submitted', 'true');
  });
  document.addEventListener('DOMContentLoaded', function () {
    var parts = document.querySelectorAll('[data-refresh]');
    for (var i = 0; i < parts.length; i++) refresh(parts[i]);
  });
})();
