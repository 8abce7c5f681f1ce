import { describe, expect, it } from 'vitest';
import { terminalBlock, terminalJson, terminalLine } from '../../shared/terminal-text.ts';
import { rawControls } from '../support/raw-controls.ts';

describe('terminalLine', () => {
  it('shows ESC sequences, OSC title and hyperlink sequences and BEL as visible escapes', () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\';
    expect(terminalLine(hostile)).toBe(
      '\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]8;;https://evil.example\\u001b\\click\\u001b]8;;\\u001b\\',
    );
  });

  it('escapes a carriage return, DEL and the C1 controls (CSI and OSC as one character)', () => {
    expect(terminalLine('ok\rFAKE\u007f\u0085\u009b31m\u009d0;t\u009c')).toBe(
      'ok\\u000dFAKE\\u007f\\u0085\\u009b31m\\u009d0;t\\u009c',
    );
  });

  it('escapes bidi overrides, isolates and marks, and the line and paragraph separators', () => {
    const text = 'a\u202eb\u202ac\u2066d\u2069e\u200ef\u200fg\u061ch\u2028i\u2029j';
    expect(terminalLine(text)).toBe('a\\u202eb\\u202ac\\u2066d\\u2069e\\u200ef\\u200fg\\u061ch\\u2028i\\u2029j');
  });

  it('escapes newline and tab, so a field cannot start a line of its own', () => {
    expect(terminalLine('objective\nrun r1 complete\tyes')).toBe('objective\\u000arun r1 complete\\u0009yes');
  });

  it('leaves printable text, non-Latin scripts, emoji and backslashes as they are', () => {
    const text = 'Résumé: 東京 ✓ 🚀 C:\\path "quoted" ‐ ∑';
    expect(terminalLine(text)).toBe(text);
  });
});

describe('terminalBlock', () => {
  it('keeps newline and tab but escapes every other control', () => {
    expect(terminalBlock('line 1\n\tline 2\r\u001b[31mred\u0007\u202e')).toBe(
      'line 1\n\tline 2\\u000d\\u001b[31mred\\u0007\\u202e',
    );
  });
});

describe('terminalJson', () => {
  it('escapes what JSON.stringify leaves raw and still parses to the same value', () => {
    const value = { q: 'a\u202eb\u0085c\u2028d\u007fe', esc: '\u001b]0;t\u0007', text: 'plain ✓' };
    expect(rawControls(JSON.stringify(value))).toEqual(['U+202E', 'U+0085', 'U+2028', 'U+007F']);
    const json = terminalJson(value, 2);
    expect(rawControls(json)).toEqual([]);
    expect(JSON.parse(json)).toEqual(value);
    expect(json).toContain('"a\\u202eb\\u0085c\\u2028d\\u007fe"');
  });
});
