/**
 * Which files a player shows: decided once, in server code that the
 * listener's view and this page share (server/resources/listening/player-tracks.ts).
 */
export { playerTracks } from '../server/resources/listening/player-tracks.ts';
