import { Page } from "../components/Page";

export function NotFoundPage() {
  return (
    <Page title="Page not found">
      <div class="panel">
        <p>There is no console page at this address.</p>
        <p>
          <a href="/sites">Go to your sites</a>
        </p>
      </div>
    </Page>
  );
}
