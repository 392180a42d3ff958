import { endSessionsOf } from '@/lib/http/live-sessions';
import { signIn, signOut, sessionOf } from '@/lib/http/session';
import { json, readJson, route } from '@/lib/http/route';

/** Who the dashboard is signed in as (public: the sign-in page asks before there is a session). */
export const GET = route(async (request) => json(await sessionOf(request)));

/** Signs in with a token `{"token":"..."}`: kept in an HttpOnly, SameSite=Strict cookie. */
export const POST = route(async (request) => {
  const { session, cookie } = await signIn(request, await readJson(request));
  return json(session, 200, { 'set-cookie': cookie });
});

/** Signs out: the cookie is cleared and the live streams this session holds open here end. */
export const DELETE = route(async (request) => {
  endSessionsOf(request);
  return json({ signedIn: false }, 200, { 'set-cookie': signOut(request) });
});
