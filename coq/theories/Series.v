(** * Series: truncated power series over an algebra.

    A series is the list of its coefficients [c_0; c_1; ...]; coefficients
    beyond the end of the list are zero.  Products and inverses are
    truncated modulo [t^m]: [smul_tr m a b] is [a b mod t^m].  Composition
    with a normalizer is Horner's rule on its Taylor coefficients
    [phi(s) = sum_k c_k s^k] ([horner]), the composition of power series
    when [s] has zero constant term. *)

From Coq Require Import List QArith ZArith Lia.
From Symattn Require Import Alg.
Import ListNotations.

Section Series.
Variable A : alg.

Definition neg (x : car A) : car A := sub zero x.

Fixpoint sadd (a b : list (car A)) : list (car A) :=
  match a, b with
  | [], _ => b
  | _, [] => a
  | x :: a', y :: b' => add x y :: sadd a' b'
  end.

Fixpoint ssub (a b : list (car A)) : list (car A) :=
  match a, b with
  | [], _ => map neg b
  | _, [] => a
  | x :: a', y :: b' => sub x y :: ssub a' b'
  end.

Definition sscale (c : car A) (b : list (car A)) : list (car A) := map (mul c) b.

(** [(x + t a') (y + t b') = x y + t (x b' + a' b)], modulo [t^m]. *)
Fixpoint smul_tr (m : nat) (a b : list (car A)) : list (car A) :=
  match m, a, b with
  | O, _, _ => []
  | _, [], _ => []
  | _, _, [] => []
  | S m', x :: a', y :: b' => mul x y :: sadd (firstn m' (sscale x b')) (smul_tr m' a' b)
  end.

Fixpoint dotl (u v : list (car A)) : car A :=
  match u, v with
  | x :: u', y :: v' => add (mul x y) (dotl u' v')
  | _, _ => zero
  end.

(** The inverse of a unit [a_0 + a_1 t + ...]: [b_0 = 1/a_0] and
    [b_k = -(1/a_0) sum_{i=1..k} a_i b_{k-i}]; [rb] is [b_{k-1}; ...; b_0]. *)
Fixpoint sinv_loop (n : nat) (c : car A) (a' rb : list (car A)) : list (car A) :=
  match n with
  | O => rev rb
  | S n' => sinv_loop n' c a' (mul (neg c) (dotl a' rb) :: rb)
  end.

Definition sinv_tr (m : nat) (a : list (car A)) : list (car A) :=
  match m, a with
  | O, _ => []
  | _, [] => []
  | S m', x :: a' => let c := inv x in sinv_loop m' c a' [c]
  end.

End Series.

(** Horner's rule [c_0 + x (c_1 + x (c_2 + ...))] in any algebra. *)
Definition horner (B : alg) (cs : list Q) (x : car B) : car B :=
  fold_right (fun c acc => add (ofQ c) (mul x acc)) zero cs.

(** The truncated series over [A] modulo [t^m], as an algebra. *)
Definition series_alg (A : alg) (m : nat) : alg := {|
  car := list (car A);
  zero := [];
  one := [one];
  add := sadd A;
  sub := ssub A;
  mul := smul_tr A m;
  inv := sinv_tr A m;
  ofQ := fun q => [ofQ q]
|}.

(** ** Relational lemmas: series over related algebras are related *)

Section SeriesRel.
Variables (A B : alg) (R : car A -> car B -> Prop).
Hypothesis HR : alg_rel A B R.

Lemma neg_rel x y : R x y -> R (neg A x) (neg B y).
Proof. intros; apply (rel_sub _ _ _ HR); auto; apply (rel_zero _ _ _ HR). Qed.

Lemma sadd_rel a a' b b' : Forall2 R a a' -> Forall2 R b b' -> Forall2 R (sadd A a b) (sadd B a' b').
Proof.
  intros H; revert b b'; induction H; intros b b' Hb; simpl; auto.
  destruct Hb; simpl; [constructor; auto|constructor; [apply (rel_add _ _ _ HR); auto|auto]].
Qed.

Lemma ssub_rel a a' b b' : Forall2 R a a' -> Forall2 R b b' -> Forall2 R (ssub A a b) (ssub B a' b').
Proof.
  intros H; revert b b'; induction H; intros b b' Hb; simpl.
  - eapply Forall2_map; eauto using neg_rel.
  - destruct Hb; simpl; [constructor; auto|constructor; [apply (rel_sub _ _ _ HR); auto|auto]].
Qed.

Lemma sscale_rel c c' b b' : R c c' -> Forall2 R b b' -> Forall2 R (sscale A c b) (sscale B c' b').
Proof. intros Hc Hb; eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto. Qed.

Lemma smul_rel m a a' b b' : Forall2 R a a' -> Forall2 R b b' -> Forall2 R (smul_tr A m a b) (smul_tr B m a' b').
Proof.
  revert a a' b b'; induction m; intros a a' b b' Ha Hb; simpl; [constructor|].
  destruct Ha as [|x x' a a' Hx Ha]; [constructor|].
  destruct Hb as [|y y' b b' Hy Hb']; [constructor|].
  constructor; [apply (rel_mul _ _ _ HR); auto|].
  apply sadd_rel; [apply Forall2_firstn, sscale_rel; auto|].
  apply IHm; auto; constructor; auto.
Qed.

Lemma dotl_rel u u' v v' : Forall2 R u u' -> Forall2 R v v' -> R (dotl A u v) (dotl B u' v').
Proof.
  intros H; revert v v'; induction H; intros v v' Hv; simpl; [apply (rel_zero _ _ _ HR)|].
  destruct Hv; [apply (rel_zero _ _ _ HR)|].
  apply (rel_add _ _ _ HR); [apply (rel_mul _ _ _ HR)|]; auto.
Qed.

Lemma sinv_loop_rel n c c' a a' rb rb' :
  R c c' -> Forall2 R a a' -> Forall2 R rb rb' -> Forall2 R (sinv_loop A n c a rb) (sinv_loop B n c' a' rb').
Proof.
  revert rb rb'; induction n; intros rb rb' Hc Ha Hrb; simpl.
  - apply Forall2_rev; auto.
  - apply IHn; auto; constructor; auto.
    apply (rel_mul _ _ _ HR); [apply neg_rel; auto|apply dotl_rel; auto].
Qed.

Lemma sinv_rel m a a' : Forall2 R a a' -> Forall2 R (sinv_tr A m a) (sinv_tr B m a').
Proof.
  intros H; destruct m; simpl; [constructor|].
  destruct H; [constructor|].
  apply sinv_loop_rel; auto; [apply (rel_inv _ _ _ HR); auto|constructor; auto].
  apply (rel_inv _ _ _ HR); auto.
Qed.

Lemma series_rel m : alg_rel (series_alg A m) (series_alg B m) (Forall2 R).
Proof.
  split; simpl; intros.
  - constructor.
  - constructor; [apply (rel_one _ _ _ HR)|constructor].
  - apply sadd_rel; auto.
  - apply ssub_rel; auto.
  - apply smul_rel; auto.
  - apply sinv_rel; auto.
  - constructor; [apply (rel_ofQ _ _ _ HR)|constructor].
Qed.

End SeriesRel.

Lemma horner_rel (A B : alg) (R : car A -> car B -> Prop) (HR : alg_rel A B R) cs x y :
  R x y -> R (horner A cs x) (horner B cs y).
Proof.
  intros H; unfold horner; induction cs; simpl; [apply (rel_zero _ _ _ HR)|].
  apply (rel_add _ _ _ HR); [apply (rel_ofQ _ _ _ HR)|apply (rel_mul _ _ _ HR); auto].
Qed.
