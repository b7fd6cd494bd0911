// The package as a user gets it: `npm pack`, the tarball installed into an empty folder outside
// the repository (no MAUMAU_PROTO_DIR, nothing from ../../proto), then
//   1. in Node, a whole match against the server's built-in bots through the node entry (and
//      the example of the package's README.md);
//   2. in Chromium, examples/web bundled with esbuild from the installed browser entry, served
//      from another origin than the server: with `--public-play --allow-origin` it creates its
//      match with CreatePublicMatch (no operator token) and plays its seat over
//      Watch + SubmitAction to the end and shows the result with no console error; without, the
//      browser refuses with a CORS error. The commands of examples/web/README.md are run as
//      written (on free ports instead when 8000 or 50051 is taken);
//   3. in Chromium, the server's /play page hosted on another origin, its script bundled from
//      the installed package: a person deals through public play and plays the match to the end
//      by clicks, reloads midway and gets the same seat back, and sees who won.
// Screenshots go to $MAUMAU_TEST_OUTPUT/web (default target/test-output/web).
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { launchChromium, serverBinary, startServer } from './harness.js';
import { deal, playOut } from './play-ui.js';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPO = path.resolve(PACKAGE, '..', '..');
const WEB = path.join(REPO, 'examples', 'web');
const OUTPUT = path.resolve(REPO, process.env.MAUMAU_TEST_OUTPUT ?? path.join('target', 'test-output'), 'web');
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The commands of examples/web/README.md, each run as written.
const README = fs.readFileSync(path.join(WEB, 'README.md'), 'utf8');
const BUILD = 'npx esbuild main.js --bundle --format=esm --outfile=main.bundle.js';
const SERVE = 'maumau serve --public-play --allow-origin http://127.0.0.1:8000';
const PAGE = 'python3 -m http.server 8000 --bind 127.0.0.1';

let dir; // the temporary folder: the tarball, the app, a bin/ with `maumau`
let app;
const env = { ...process.env };
delete env.MAUMAU_PROTO_DIR;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-packed-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: PACKAGE, env });
  const [{ filename }] = JSON.parse(stdout);
  app = path.join(dir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const esbuild = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')).devDependencies.esbuild;
  await run('npm', ['install', '--no-audit', '--no-fund', path.join(dir, path.basename(filename)), `esbuild@${esbuild}`], { cwd: app, env });
  // `maumau` on PATH is the server binary under test.
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(serverBinary(), path.join(dir, 'bin', 'maumau'));
  env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${env.PATH}`;
});
after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('the packed tarball holds the generated code and the protos, and no tests', async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: PACKAGE, env });
  const files = JSON.parse(stdout)[0].files.map((f) => f.path);
  for (const f of ['src/node.js', 'src/browser.js', 'src/node.d.ts', 'src/gen/maumau/v1/play_pb.js', 'src/gen/maumau/v1/play_pb.d.ts', 'proto/maumau/v1/play.proto']) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
  assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/')), files.join('\n'));
});

test('installed from the tarball, the node entry plays a whole match against built-in bots', { timeout: 120_000 }, async () => {
  const server = await startServer();
  try {
    fs.writeFileSync(path.join(app, 'play.js'), `
      import { BotKind, MatchStatus, Profile, connect, run, verifySeed } from '@maumau/client';
      const address = process.argv[2];
      const { matches, close } = connect(address);
      const bots = [1, 2, 3].map((seat) => ({ seat, kind: BotKind.HEURISTIC }));
      const created = await matches.createMatch({ config: { profile: Profile.CLASSIC, seats: 4 }, bots });
      close();
      let prompts = 0;
      const report = await run((p) => (prompts++, p.legalActions[0].index), address, created.seatTokens[0].token);
      console.log(JSON.stringify({
        entry: import.meta.resolve('@maumau/client'), status: MatchStatus[report.status], prompts,
        decisions: report.seats[0].decisions, seed: verifySeed(report, created.seedCommitment),
      }));
    `);
    const { stdout } = await run(process.execPath, ['play.js', server.address], { cwd: app, env });
    const out = JSON.parse(stdout);
    assert.equal(out.entry, `file://${path.join(fs.realpathSync(app), 'node_modules', '@maumau', 'client', 'src', 'node.js')}`);
    assert.equal(out.status, 'FINISHED');
    assert.ok(out.prompts > 0);
    assert.equal(out.decisions, out.prompts);
    assert.ok(out.seed);
    // The example at the top of the package's README.md, as written but for the address.
    const readme = fs.readFileSync(path.join(app, 'node_modules', '@maumau', 'client', 'README.md'), 'utf8');
    const example = /```js\n([^]*?)```/.exec(readme)[1].replaceAll("'127.0.0.1:50051'", JSON.stringify(server.address));
    fs.writeFileSync(path.join(app, 'readme.js'), example);
    const { stdout: printed } = await run(process.execPath, ['readme.js'], { cwd: app, env });
    assert.match(printed, /^FINISHED \[/);
  } finally {
    await server.stop();
  }
});

// ----- the browser ---------------------------------------------------------------------------

/** True when nothing listens on 127.0.0.1:port. */
function portFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function freePort() {
  const probe = net.createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts a command line (words split on spaces, no shell) in the app folder, until `ready(output)`. */
async function start(line, ready) {
  const [command, ...args] = line.split(' ');
  const proc = spawn(command, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => { output += d; });
  proc.stderr.on('data', (d) => { output += d; });
  let exited = null;
  const exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve((exited = code ?? signal))));
  for (const deadline = Date.now() + 30_000; !(await ready(output)); await sleep(50)) {
    if (exited !== null || Date.now() > deadline) throw new Error(`${line}: ${exited === null ? 'timed out' : `exited (${exited})`}\n${output}`);
  }
  return {
    output: () => output,
    async stop() {
      if (exited === null) {
        proc.kill('SIGINT');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
}

/** The page at `url`, its Play button clicked, until #result says something; console errors kept. */
async function playPage(browser, url, shot) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('result').textContent !== '', null, { timeout: 90_000 });
  const result = await page.textContent('#result');
  fs.mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: path.join(OUTPUT, shot), fullPage: true });
  await page.close();
  return { result, errors };
}

let page = null; // the README's page server, once built
let browser = null;
async function webPage() {
  if (page) return page;
  for (const command of [BUILD, SERVE, PAGE]) assert.ok(README.includes(command), `examples/web/README.md shows \`${command}\``);
  for (const f of ['index.html', 'main.js']) fs.copyFileSync(path.join(WEB, f), path.join(app, f));
  const [command, ...args] = BUILD.split(' ');
  await run(command, args, { cwd: app, env });
  const exact = (await portFree(8000)) && (await portFree(50051));
  const pagePort = exact ? 8000 : await freePort();
  const serverPort = exact ? 50051 : await freePort();
  const origin = `http://127.0.0.1:${pagePort}`;
  const serve = exact ? SERVE : `${SERVE.replace('http://127.0.0.1:8000', origin)} --listen 127.0.0.1:${serverPort}`;
  const server = await start(serve, (output) => /serving on \S+/.test(output));
  const files = await start(exact ? PAGE : PAGE.replace('8000', String(pagePort)), async () => !(await portFree(pagePort)));
  browser = await launchChromium();
  page = { origin, server, files, url: exact ? `${origin}/` : `${origin}/?server=http://127.0.0.1:${serverPort}` };
  return page;
}
after(async () => {
  await browser?.close();
  await page?.server.stop();
  await page?.files.stop();
});

const help = execFileSync(serverBinary(), ['serve', '--help'], { encoding: 'utf8' });
const skipCors = help.includes('--allow-origin') ? false : 'this maumau serve has no --allow-origin yet: the page cannot reach it from another origin';

test('in Chromium, examples/web plays its seat over grpc-web to the end', { timeout: 180_000, skip: skipCors }, async () => {
  const { url, server } = await webPage();
  const { result, errors } = await playPage(browser, url, 'match.png');
  assert.match(result, /^finished: placing [1-4] of 4$/, server.output());
  assert.deepEqual(errors, []);
});

test('in Chromium, a server without --allow-origin is refused by CORS', { timeout: 120_000, skip: skipCors }, async () => {
  const { origin } = await webPage();
  const server = await startServer(); // no --allow-origin
  try {
    const { result, errors } = await playPage(browser, `${origin}/?server=http://${server.address}`, 'cors-refused.png');
    assert.match(result, /^error: /);
    assert.ok(errors.some((e) => e.includes('CORS')), errors.join('\n'));
  } finally {
    await server.stop();
  }
});

test('in Chromium, the /play page hosted on another origin and built from the package is played by clicks', { timeout: 300_000, skip: skipCors }, async () => {
  // The page's script with its client taken from the installed tarball, bundled by the app.
  const script = fs.readFileSync(path.join(REPO, 'server', 'assets', 'play.js'), 'utf8')
    .replace("'../../clients/typescript/src/browser.js'", "'@maumau/client'");
  assert.ok(script.includes("from '@maumau/client'"), 'play.js imports the client once');
  const site = path.join(app, 'site');
  fs.mkdirSync(site, { recursive: true });
  fs.writeFileSync(path.join(app, 'play-src.js'), script);
  await run('npx', ['esbuild', 'play-src.js', '--bundle', '--format=esm', '--platform=browser', '--outfile=site/play.bundle.js'], { cwd: app, env });
  const pagePort = await freePort();
  const origin = `http://127.0.0.1:${pagePort}`;
  const server = await startServer({ args: ['--public-play', '--allow-origin', origin] });
  // The page itself as the server serves it, its inlined script swapped for the app's bundle.
  const html = await (await fetch(`http://${server.address}/play`)).text();
  const swapped = html.replace(/<script type="module">[^]*?<\/script>/, '<script type="module" src="play.bundle.js"></script>');
  assert.notEqual(swapped, html, 'the page has its script inline');
  fs.writeFileSync(path.join(site, 'index.html'), swapped);
  const files = http.createServer((req, res) => {
    const name = new URL(req.url, origin).pathname === '/' ? 'index.html' : path.basename(new URL(req.url, origin).pathname);
    const file = path.join(site, name);
    if (!fs.existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve) => files.listen(pagePort, '127.0.0.1', resolve));
  if (!browser) {
    browser = await launchChromium();
  }
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(`${origin}/?server=http://${server.address}`);
    await page.waitForFunction(() => performance.getEntriesByName('maumau-ready').length > 0);
    await deal(page);
    const { reloaded } = await playOut(page, [], true, { log: server.log });
    assert.ok(reloaded, 'the match ended before a reload');
    assert.match(await page.textContent('#result'), /Winner: \S/);
    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'play-other-origin.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await new Promise((resolve) => files.close(resolve));
    await server.stop();
  }
});
