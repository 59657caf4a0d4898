/** What the notifier answers an operator (the REPL's `notifications-retry`) when it refuses, and what it logs of a notice it holds back. */
export const MSG = {
  notificationNotFound: (id: string) => `Notification not found: ${id}`,
  alreadySent: (id: string) => `Notification ${id} was sent already; a sent notification is not sent again`,
  redacted: (id: string) => `Notification ${id} carried a secret that has been redacted; it cannot be sent again (ask for a new one)`,
  contactsNotYetKnown: (username: string) => `user ${username} not known yet: auth has not announced the users' contacts to this notifier; the alert is handed over again later`,
};
