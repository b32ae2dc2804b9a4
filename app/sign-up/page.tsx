import { Suspense } from "react";
import { SignUpPage } from "~/components/account/sign-up-page";

export default function Page() {
  return (
    <Suspense>
      <SignUpPage />
    </Suspense>
  );
}
