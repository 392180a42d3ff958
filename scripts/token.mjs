// Mints an HS256 token for this broker, signed with JWT_SECRET (and JWT_ISSUER / JWT_AUDIENCE
// when set), for trying auth out or for scripts. An identity provider does this in production.
//   JWT_SECRET=... node scripts/token.mjs --role admin --sub alice [--hours 8]
import { SignJWT } from 'jose';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const ROLES = ['read-only', 'read-write', 'admin'];
const role = arg('role');
const sub = arg('sub', role ? `${role}-user` : undefined);
const hours = Number(arg('hours', 8));
const secret = process.env.JWT_SECRET;
if (!ROLES.includes(role) || !secret || !(hours > 0)) {
  console.error(
    `usage: JWT_SECRET=<the server's secret> node scripts/token.mjs --role ${ROLES.join('|')} [--sub NAME] [--hours 8]`,
  );
  process.exit(2);
}
let jwt = new SignJWT({ role })
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject(sub)
  .setIssuedAt()
  .setExpirationTime(`${hours}h`);
if (process.env.JWT_ISSUER) jwt = jwt.setIssuer(process.env.JWT_ISSUER);
if (process.env.JWT_AUDIENCE) jwt = jwt.setAudience(process.env.JWT_AUDIENCE);
console.log(await jwt.sign(new TextEncoder().encode(secret)));
