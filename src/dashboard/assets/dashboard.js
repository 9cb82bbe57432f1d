// Mailroom dashboard: refreshes the parts of a page marked data-refresh by fetching their
// server-rendered HTML and swapping it in. No library: this is all the page's script does,
// and every page works without it.
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
  document.addEventListener('DOMContentLoaded', function () {
    var parts = document.querySelectorAll('[data-refresh]');
    for (var i = 0; i < parts.length; i++) refresh(parts[i]);
  });
})();
