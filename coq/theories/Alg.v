(** * Alg: the algebra interface every computation is written against.

    The network, its series and its tangents are written once, over an
    [alg]: a carrier with zero, one, addition, subtraction, multiplication,
    an inverse (meant for units; any value elsewhere) and the embedding of
    the rational constants.  The meaning of every statement is the
    instance [Qalg] (the rationals of the standard library); the checkers
    compute in other instances (integers mod p, bounds), and a relation
    preserved by all the operations ([alg_rel]) carries their results back
    to Q. *)

From Coq Require Import List QArith.
Import ListNotations.

Record alg := Alg {
  car : Type;
  zero : car;
  one : car;
  add : car -> car -> car;
  sub : car -> car -> car;
  mul : car -> car -> car;
  inv : car -> car;
  ofQ : Q -> car
}.

Arguments zero {a}.
Arguments one {a}.
Arguments add {a}.
Arguments sub {a}.
Arguments mul {a}.
Arguments inv {a}.
Arguments ofQ {a}.

(** A relation between two algebras preserved by every operation. *)
Record alg_rel (A B : alg) (R : car A -> car B -> Prop) : Prop := {
  rel_zero : R zero zero;
  rel_one : R one one;
  rel_add : forall x x' y y', R x x' -> R y y' -> R (add x y) (add x' y');
  rel_sub : forall x x' y y', R x x' -> R y y' -> R (sub x y) (sub x' y');
  rel_mul : forall x x' y y', R x x' -> R y y' -> R (mul x y) (mul x' y');
  rel_inv : forall x x', R x x' -> R (inv x) (inv x');
  rel_ofQ : forall q, R (ofQ q) (ofQ q)
}.

(** The rationals: the meaning of every statement.  Sums and products are
    reduced ([Qplus'] is [Qred] of [Qplus]); equality is [Qeq]. *)
Definition Qalg : alg := {|
  car := Q;
  zero := 0%Q;
  one := 1%Q;
  add := Qplus';
  sub := Qminus';
  mul := Qmult';
  inv := Qinv;
  ofQ := fun q => q
|}.

(** ** Lists: the relational lemmas used everywhere *)

Section ListRel.
Variables (X Y : Type) (R : X -> Y -> Prop).

Lemma Forall2_map {U V : Type} (S : U -> V -> Prop) (f : U -> X) (g : V -> Y) l l' :
  Forall2 S l l' -> (forall u v, S u v -> R (f u) (g v)) ->
  Forall2 R (map f l) (map g l').
Proof. induction 1; simpl; constructor; auto. Qed.

Lemma Forall2_rev l l' : Forall2 R l l' -> Forall2 R (rev l) (rev l').
Proof.
  induction 1; simpl; [constructor|].
  apply Forall2_app; auto.
Qed.

Lemma Forall2_firstn n l l' : Forall2 R l l' -> Forall2 R (firstn n l) (firstn n l').
Proof.
  revert l l'; induction n; intros l l' H; simpl; [constructor|].
  destruct H; simpl; constructor; auto.
Qed.

Lemma Forall2_skipn n l l' : Forall2 R l l' -> Forall2 R (skipn n l) (skipn n l').
Proof.
  revert l l'; induction n; intros l l' H; simpl; auto.
  destruct H; simpl; [constructor|auto].
Qed.

Lemma Forall2_nth l l' d d' k : Forall2 R l l' -> R d d' -> R (nth k l d) (nth k l' d').
Proof.
  intros H; revert k; induction H; intros k Hd; destruct k; simpl; auto.
Qed.

Lemma Forall2_repeat x y n : R x y -> Forall2 R (repeat x n) (repeat y n).
Proof. intros H; induction n; simpl; constructor; auto. Qed.

Lemma Forall2_length l l' : Forall2 R l l' -> length l = length l'.
Proof. induction 1; simpl; auto. Qed.

Lemma Forall2_fold_left {U V : Type} (S : U -> V -> Prop) (f : U -> X -> U) (g : V -> Y -> V) :
  (forall u v x y, S u v -> R x y -> S (f u x) (g v y)) ->
  forall l l' a b, Forall2 R l l' -> S a b -> S (fold_left f l a) (fold_left g l' b).
Proof. intros Hf l l' a b H; revert a b; induction H; simpl; auto. Qed.

Lemma Forall2_fold_right {U V : Type} (S : U -> V -> Prop) (f : X -> U -> U) (g : Y -> V -> V) :
  (forall u v x y, S u v -> R x y -> S (f x u) (g y v)) ->
  forall l l' a b, Forall2 R l l' -> S a b -> S (fold_right f a l) (fold_right g b l').
Proof. intros Hf l l' a b H; revert a b; induction H; simpl; auto. Qed.

End ListRel.

Lemma Forall2_seq_map {X Y : Type} (R : X -> Y -> Prop) (f : nat -> X) (g : nat -> Y) s n :
  (forall k, R (f k) (g k)) -> Forall2 R (map f (seq s n)) (map g (seq s n)).
Proof. revert s; induction n; intros s H; simpl; constructor; auto. Qed.

Lemma Forall2_impl' {X Y : Type} (R S : X -> Y -> Prop) l l' :
  (forall x y, R x y -> S x y) -> Forall2 R l l' -> Forall2 S l l'.
Proof. intros H; induction 1; constructor; auto. Qed.

Lemma nth_map_lt {X Y : Type} (f : X -> Y) (l : list X) (d : X) (d' : Y) (n : nat) :
  (n < length l)%nat -> nth n (map f l) d' = f (nth n l d).
Proof.
  intros H; rewrite (nth_indep _ _ (f d)) by (rewrite map_length; auto).
  apply map_nth.
Qed.

Lemma nth_skipn' {X : Type} (n : nat) (l : list X) (k : nat) (d : X) :
  nth k (skipn n l) d = nth (n + k) l d.
Proof.
  revert l; induction n; intros l; simpl; auto.
  destruct l; simpl; auto. destruct k; auto.
Qed.

Lemma Forall2_of_nth {X Y : Type} (R : X -> Y -> Prop) (l : list X) (l' : list Y) :
  length l = length l' ->
  (forall n d d', (n < length l)%nat -> R (nth n l d) (nth n l' d')) -> Forall2 R l l'.
Proof.
  revert l'; induction l; intros [|y l'] H1 H2; simpl in *; try discriminate; constructor.
  - apply (H2 O a y). apply Nat.lt_0_succ.
  - apply IHl; [congruence|]. intros n d d' Hn. apply (H2 (S n)). now apply (proj1 (Nat.succ_lt_mono _ _)).
Qed.

Lemma nth_firstn' {X : Type} (k j : nat) (l : list X) (d : X) :
  nth j (firstn k l) d = if Nat.ltb j k then nth j l d else d.
Proof.
  revert k j; induction l as [|x l IH]; intros k j.
  - destruct k, j; simpl; try reflexivity; match goal with |- context [if ?b then _ else _] => destruct b; reflexivity end.
  - destruct k as [|k]; [destruct j; reflexivity|].
    destruct j as [|j]; [reflexivity|]. simpl. rewrite IH. reflexivity.
Qed.
