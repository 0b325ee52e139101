// The console application: the login screen, or the signed-in frame with the sections' routes.
import { render } from "preact";
import lazy, { ErrorBoundary } from "preact-iso/lazy";
import { LocationProvider, Route, Router, useLocation } from "preact-iso/router";
import { useEffect, useLayoutEffect, useState } from "preact/hooks";

import { api, handleUnauthorized, type User } from "./api";
import { Shell } from "./components/Shell";
import { focusHeading } from "./focus";
import { LoginPage } from "./pages/Login";
import { NotFoundPage } from "./pages/NotFound";
import { sections } from "./sections";
import { InvitePage } from "./team/InvitePage";
import { UserContext } from "./user";

const SharedDashboard = lazy(() => import("./reports/SharedDashboard").then((m) => m.SharedDashboard));

function Home() {
  const { route } = useLocation();
  useEffect(() => route("/sites", true), [route]);
  return null;
}

function SignedIn() {
  const [user, setUser] = useState<User | null>(null);
  useLayoutEffect(() => {
    api.me().then(setUser, () => undefined);
  }, []);
  return (
    <UserContext.Provider value={user}>
    <Shell user={user}>
      <Router onRouteChange={focusHeading}>
        {[
          <Route key="/" path="/" component={Home} />,
          ...sections.flatMap((section) =>
            section.routes.map((r) => <Route key={r.path} path={r.path} component={r.component} />),
          ),
          <Route key="404" default component={NotFoundPage} />,
        ]}
      </Router>
    </Shell>
    </UserContext.Provider>
  );
}

function Root() {
  const { path, route } = useLocation();
  useEffect(() => {
    // Any 401 means the session is gone: sign in, then come back to where the owner was.
    handleUnauthorized(() => {
      const here = window.location.pathname + window.location.search;
      if (["/login", "/invite"].includes(window.location.pathname)) return;
      if (window.location.pathname.startsWith("/share/")) return; // a shared dashboard has no session
      route(`/login?next=${encodeURIComponent(here)}`, true);
    });
  }, [route]);
  if (path === "/invite") return <InvitePage />;
  if (path.startsWith("/share/")) {
    // The boundary waits for the lazily loaded dashboard (outside the router, which would).
    return (
      <ErrorBoundary>
        <SharedDashboard />
      </ErrorBoundary>
    );
  }
  return path === "/login" ? <LoginPage /> : <SignedIn />;
}

render(
  <LocationProvider>
    <Root />
  </LocationProvider>,
  document.getElementById("app") as HTMLElement,
);
performance.mark("console-started");
