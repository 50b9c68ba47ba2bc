// The demo page (web/demo) in headless Chromium, its WebGPU on the software adapter Chromium
// brings (SwiftShader): the page must end with PASS (every invocation's output written,
// read back and freed, statistics exact), and a screenshot of it is taken. The page loads
// the flattened module and manifest from $GPU_HEAP_WEB_CASES (ualloc, the default);
// Chromium is $GPU_HEAP_CHROMIUM. cli/tests/web.rs runs it in CI.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, extname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const web = fileURLToPath(new URL('..', import.meta.url));
const cases = process.env.GPU_HEAP_WEB_CASES;
const executablePath = process.env.GPU_HEAP_CHROMIUM;
const screenshot = process.env.GPU_HEAP_DEMO_SCREENSHOT;
const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.wgsl': 'text/plain' };

// web/ at /, the cases at /cases/.
function serve() {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = path.startsWith('/cases/') ? join(cases, path.slice(7)) : join(web, path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('the demo page runs in headless Chromium', { timeout: 600_000 }, async () => {
  assert.ok(cases && executablePath && screenshot, 'run through cli/tests/web.rs');
  const server = await serve();
  const browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/demo/index.html?wgsl=/cases/ualloc.wgsl&manifest=/cases/ualloc.json`);
    const result = page.locator('#result');
    await page.waitForFunction(() => document.getElementById('result').textContent !== 'running', null, { timeout: 540_000 });
    const text = await result.textContent();
    const details = await page.locator('#details').textContent();
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.equal(text, 'PASS', details);
    const png = readFileSync(screenshot);
    assert.ok(png.length > 1000 && png.subarray(1, 4).toString() === 'PNG', 'the screenshot is a PNG');
  } finally {
    await browser.close();
    server.close();
  }
});
