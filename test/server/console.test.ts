// The web console end to end in headless Chromium (the Debian package; skipped with an install
// hint when absent, a failure under QUARTET_REQUIRE_CLIENTS=1) against an in-process server on
// 127.0.0.1 port 0: the login form, each main page showing what the admin API returns, a record
// produced through Kafka in the message browser, a consumer group's lag, a read-only user seeing
// no write actions (and the API refusing them), and a screenshot of each main page checked to be
// a real, non-blank PNG with its key element visible. The headers: console-assets.test.ts.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { IggyClient } from '../../src/clients/iggy/index.js';
import { globalGrants } from '../../src/core/access.js';
import { startBroker, type StartedBroker } from '../conformance/helpers.js';
import { Browser, chromiumSkip } from './cdp.js';

const skip = chromiumSkip();
let started: StartedBroker;
let browser: Browser;
let origin: string;
let shots: string;
let kafka: Kafka;

async function login(user: string, password: string): Promise<void> {
  await browser.navigate(`${origin}/`);
  await browser.waitFor(`document.querySelector('main')?.dataset.page === 'login' || document.getElementById('logout')`, 'the page');
  await browser.evaluate(`sessionStorage.clear()`);
  await browser.navigate(`${origin}/#/overview`);
  await browser.waitFor(`document.querySelector('main')?.dataset.page === 'login'`, 'the login form');
  await browser.evaluate(`(() => {
    document.getElementById('login-user').value = ${JSON.stringify(user)};
    document.getElementById('login-password').value = ${JSON.stringify(password)};
    document.getElementById('login').requestSubmit();
  })()`);
  await browser.waitFor(`document.querySelector('main').dataset.page === 'overview'`, 'the overview after login');
}

/** Goes to a page by its fragment and waits until it has rendered. */
async function open(fragment: string, page: string): Promise<void> {
  await browser.evaluate(`location.hash = ${JSON.stringify(fragment)}`);
  await browser.waitFor(`document.querySelector('main').dataset.page === ${JSON.stringify(page)}`, `page ${fragment}`);
}

const text = (selector: string): Promise<string> => browser.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`);
const exists = (selector: string): Promise<boolean> => browser.evaluate<boolean>(`document.querySelector(${JSON.stringify(selector)}) !== null`);

/** Saves a screenshot and checks it: a PNG, not tiny, and the page's key element laid out on screen. */
async function screenshot(name: string, keySelector: string): Promise<void> {
  const box = await browser.evaluate<{ width: number; height: number; top: number } | null>(
    `(() => { const r = document.querySelector(${JSON.stringify(keySelector)})?.getBoundingClientRect(); return r ? { width: r.width, height: r.height, top: r.top } : null; })()`,
  );
  assert.ok(box !== null && box.width > 0 && box.height > 0 && box.top < 900, `${keySelector} is visible on ${name}: ${JSON.stringify(box)}`);
  const png = await browser.screenshot();
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal(png.readUInt32BE(16), 1280, 'screenshot width');
  // A blank page compresses to a few hundred bytes; text, tables and charts do not.
  assert.ok(png.length > 10_000, `${name} screenshot is ${png.length} bytes`);
  writeFileSync(join(shots, `${name}.png`), png);
}

describe('web console in headless Chromium', { skip, timeout: 120_000 }, () => {
  before(async () => {
    shots = mkdtempSync(join(tmpdir(), 'quartet-console-shots-'));
    started = await startBroker({ kafka: true, flags: { 'iggy-enabled': true } });
    const broker = started.broker!;
    origin = `http://127.0.0.1:${started.server!.httpAddress()!.port}`;
    await broker.users.create({ username: 'viewer', password: 'viewer-password', permissions: globalGrants(['read_topics', 'read_streams', 'read_servers', 'poll_messages']) });
    kafka = new Kafka({ clientId: 'console-test', brokers: [started.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'console-orders', numPartitions: 2 }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'console-orders',
      messages: [
        { partition: 0, key: 'order-17', value: JSON.stringify({ item: 'espresso-beans', qty: 3 }), headers: { source: 'kafkajs' } },
        { partition: 0, key: 'order-18', value: 'plain text value' },
        { partition: 0, key: 'order-19', value: 'third' },
      ],
    });
    await producer.disconnect();
    await admin.setOffsets({ groupId: 'console-billing', topic: 'console-orders', partitions: [{ partition: 0, offset: '1' }] });
    await admin.disconnect();
    // An Iggy consumer group on the same topic (stream `default`), and a Cursus group over Kafka's offsets.
    const [iggyHost, iggyPort] = started.iggyAddress!.split(':');
    const iggy = new IggyClient({ host: iggyHost!, port: Number(iggyPort), credentials: { username: 'root', password: 'root-password' } });
    await iggy.connect();
    await iggy.createConsumerGroup('default', 'console-orders', 'console-iggy-readers');
    await iggy.close();
    const topic = broker.catalog.requireTopic({ namespace: 'default', topic: 'console-orders' });
    await broker.groups.save('cursus', 'console-runners', { version: 1, selector: { topic: 'console-orders' }, expansion: [{ topic: 'console-orders', partitions: 2 }], registeredAt: 0 });
    await broker.offsets.commit('kafka', 'console-runners', [{ topicInternalId: topic.internalId, partition: 0, offset: 2 }]);
    browser = await Browser.launch();
  });
  after(async () => {
    await browser?.close();
    await started?.stop();
    if (process.env.QUARTET_KEEP_SCREENSHOTS === undefined) rmSync(shots, { recursive: true, force: true });
    else console.log(`screenshots in ${shots}`);
  });

  test('a wrong password keeps the login form with the API error', async () => {
    await browser.navigate(`${origin}/`);
    await browser.waitFor(`document.querySelector('main')?.dataset.page === 'login'`, 'the login form');
    await browser.evaluate(`(() => {
      document.getElementById('login-user').value = 'root';
      document.getElementById('login-password').value = 'wrong';
      document.getElementById('login').requestSubmit();
    })()`);
    await browser.waitFor(`document.getElementById('login-error').textContent !== ''`, 'the login error');
    assert.match(await text('#login-error'), /password|credential/i);
    assert.equal(await browser.evaluate<string | null>(`sessionStorage.getItem('quartet.credentials')`), null);
  });

  test('root: overview, topics, topic, messages, groups, users render the API data', async () => {
    await login('root', 'root-password');
    await browser.waitFor(`document.querySelector('#chart-messages text')`, 'the throughput chart');
    const listeners = await text('#listeners');
    assert.match(listeners, /kafka/);
    assert.match(listeners, /http127\.0\.0\.1:\d+/);
    assert.match(await text('#overview-stats'), /3messages/);
    assert.equal(await browser.evaluate<string>(`location.search`), '');
    // Records produced while the overview is open show in the live chart (sampled every 2 s).
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'console-orders', messages: Array.from({ length: 20 }, (_, i) => ({ partition: 1, value: `burst-${i}` })) });
    await producer.disconnect();
    await browser.waitFor(`document.querySelector('#chart-messages polyline') && Number(/max ([\\d.]+)/.exec(document.querySelector('#chart-messages text')?.textContent ?? '')?.[1]) > 1`, 'the throughput chart to show the burst', 20_000);
    assert.match(await text('#overview-stats'), /23messages/);
    await screenshot('overview', '#listeners');

    await open('#/topics', 'topics');
    const topics = await text('#topics');
    assert.match(topics, /default\/console-orders/);
    assert.match(topics, /default\/console-orders223/, 'two partitions, 23 messages');
    assert.ok(await exists('#create-topic'));
    await screenshot('topics', '#topics');

    await open('#/topics/default/console-orders', 'topics');
    assert.match(await text('#partitions'), /^partitionstart offsetend offsetmessagessizesegments0033/);
    assert.match(await text('#topic-names'), /Kafkaconsole-orders/);
    assert.match(await text('#config'), /retention\.ms/);
    assert.ok(await exists('#delete-topic'));

    await open('#/browse/default/console-orders', 'browse');
    await browser.waitFor(`document.querySelector('#records')`, 'the records table');
    const records = await text('#records');
    assert.match(records, /order-17/);
    assert.match(records, /source: kafkajs/);
    assert.match(records, /espresso-beans/);
    assert.match(records, /plain text value/);
    await browser.evaluate(`(() => { document.getElementById('browse-format').value = 'hex'; document.getElementById('browse').requestSubmit(); })()`);
    await browser.waitFor(`document.querySelector('#records')?.textContent.includes('6f 72 64 65 72 2d 31 37')`, 'the key in hex');
    await screenshot('messages', '#records');
    await browser.evaluate(`(() => {
      document.getElementById('browse-partition').value = '1';
      document.getElementById('browse-mode').value = 'time';
      document.getElementById('browse-from').value = '2000-01-01T00:00:00Z';
      document.getElementById('browse-format').value = 'text';
      document.getElementById('browse').requestSubmit();
    })()`);
    await browser.waitFor(`document.querySelector('#records')?.textContent.includes('burst-19')`, 'partition 1 read from a time');

    await open('#/groups', 'groups');
    assert.match(await text('#groups'), /kafkaconsole-billingempty0default\/console-orders2/);
    assert.match(await text('#groups'), /iggyconsole-iggy-readersempty0default\/console-orders/);
    assert.match(await text('#groups'), /cursusconsole-runnersempty0default\/console-orders1/);
    await open('#/groups/iggy/default/console-orders/console-iggy-readers', 'groups');
    assert.match(await text('#group-offsets'), /default\/console-orders0–3–default\/console-orders1–20–/);
    await open('#/groups/kafka/console-billing', 'groups');
    assert.match(await text('#group-offsets'), /default\/console-orders0132/);
    await screenshot('group', '#group-offsets');

    await open('#/users', 'users');
    const users = await text('#users');
    assert.match(users, /root/);
    assert.match(users, /viewer/);
    assert.ok(await exists('#create-token'));
    await screenshot('users', '#users');
  });

  test('a user without manage rights sees no write actions, and the API refuses them', async () => {
    await login('viewer', 'viewer-password');
    await open('#/topics', 'topics');
    assert.match(await text('#topics'), /console-orders/);
    assert.equal(await exists('#create-topic'), false);
    assert.ok(await exists('#read-only'));
    await open('#/topics/default/console-orders', 'topics');
    assert.equal(await exists('#delete-topic'), false);
    await open('#/users', 'users');
    assert.equal(await exists('#users'), false);
    assert.equal(await exists('#create-token'), false);
    const refused = await browser.evaluate<number>(`import('/console/api.js').then((m) => m.api('POST', 'topics', { name: 'not-allowed' }).then(() => 200, (e) => e.status))`);
    assert.equal(refused, 403);
    await browser.evaluate(`document.getElementById('logout').click()`);
    await browser.waitFor(`document.querySelector('main').dataset.page === 'login'`, 'the login form after logout');
    assert.equal(await browser.evaluate<string | null>(`sessionStorage.getItem('quartet.credentials')`), null);
  });
});
