import { Suspense } from "react";
import { SignInPage } from "~/components/account/sign-in-page";

export default function Page() {
  return (
    <Suspense>
      <SignInPage />
    </Suspense>
  );
}
