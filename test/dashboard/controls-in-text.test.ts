// Terminal controls in a page's text are written out (`\u001b`), while tags, and so the
// values of form fields that post stored text back (a queue to resume, a filter to
// replay), keep the text as stored (src/dashboard/dashboard-http.ts).

import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { controlsWrittenOutInText } from '../../src/dashboard/dashboard-http.js';

describe('controlsWrittenOutInText', () => {
  it('writes controls out in text and leaves attribute values as stored', () => {
    const queue = 'imports\u2067x';
    const html = renderToString(
      h('form', null, h('input', { type: 'hidden', name: 'queue', value: queue }), h('span', { title: 'a > b \u001b[31m' }, `resume ${queue} \u001b[2J > done`)),
    );
    const out = controlsWrittenOutInText(html);
    expect(out).toContain(`value="${queue}"`);
    expect(out).toContain('title="a > b \u001b[31m"');
    expect(out).toContain('resume imports\\u2067x \\u001b[2J > done');
    expect(controlsWrittenOutInText('text \u0007 only')).toBe('text \\u0007 only');
    expect(controlsWrittenOutInText('<p>unclosed "quote \u001b</p>')).toBe('<p>unclosed "quote \\u001b</p>');
  });
});
