// Refreshes the page's live part from the same URL every few seconds (no reload, no framework).
(() => {
  'use strict';
  const live = document.getElementById('live');
  const state = document.getElementById('live-state');
  if (!live || !state) return;
  const every = Number(live.dataset.refreshMs) || 3000;
  let busy = false;
  let refreshes = 0;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const res = await fetch(location.href, {
        headers: { 'x-console-fragment': '1' },
        credentials: 'same-origin',
      });
      if (res.status === 401) {
        location.assign('/login');
        return;
      }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const text = await res.text();
      // Sections the user opened stay open.
      const open = Array.from(live.querySelectorAll('details[open][id]')).map((d) => d.id);
      live.innerHTML = text;
      for (const id of open) {
        const d = document.getElementById(id);
        if (d) d.open = true;
      }
      refreshes++;
      live.dataset.refreshes = String(refreshes);
      state.textContent = 'live · ' + new Date().toISOString().slice(11, 19) + ' UTC';
      state.className = 'live-state ok';
    } catch (e) {
      state.textContent = 'not updating: ' + (e && e.message ? e.message : 'offline');
      state.className = 'live-state down';
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, every);
})();
