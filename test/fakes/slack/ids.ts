/** The workspace the Slack fake pretends to be; signed test requests use the same ids by default. */
export const testWorkspace = {
  teamId: 'T0TEAM',
  teamName: 'Acme',
  teamDomain: 'acme',
  appId: 'A0APP',
  botUserId: 'U0BOT',
  botId: 'B0BOT',
} as const;
