(** * Tangent: forward-mode derivatives (dual numbers with many tangents).

    An element is a value [v] with its derivatives [dv_1; dv_2; ...] in the
    parameters (missing ones are zero): the ring [S[e_1, e_2, ...]] with
    [e_i e_j = 0].  Sums and products follow [(v + dv)(w + dw) = v w + (dv w
    + v dw)], the inverse [1/(v + dv) = 1/v - dv/v^2], and a normalizer its
    own chain rule [phi(v + dv) = phi(v) + phi'(v) dv] ([tphi]), with
    [phi'] from the derivative of the Taylor coefficients ([deriv]). *)

From Coq Require Import List QArith ZArith.
From Symattn Require Import Alg Series.
Import ListNotations.

Section Tangent.
Variable S : alg.

Fixpoint cadd (u v : list (car S)) : list (car S) :=
  match u, v with
  | [], _ => v
  | _, [] => u
  | x :: u', y :: v' => add x y :: cadd u' v'
  end.

Fixpoint csub (u v : list (car S)) : list (car S) :=
  match u, v with
  | [], _ => map (neg S) v
  | _, [] => u
  | x :: u', y :: v' => sub x y :: csub u' v'
  end.

(** The derivatives of [v w]: [dv_i w + v dw_i]. *)
Fixpoint cmul (v w : car S) (du dw : list (car S)) : list (car S) :=
  match du, dw with
  | [], _ => map (mul v) dw
  | _, [] => map (fun x => mul x w) du
  | x :: du', y :: dw' => add (mul x w) (mul v y) :: cmul v w du' dw'
  end.

Definition tinv (x : car S * list (car S)) : car S * list (car S) :=
  let (v, dv) := x in
  let iv := inv v in
  let m := neg S (mul iv iv) in
  (iv, map (mul m) dv).

End Tangent.

Definition tangent_alg (S : alg) : alg := {|
  car := (car S * list (car S))%type;
  zero := (zero, []);
  one := (one, []);
  add := fun x y => (add (fst x) (fst y), cadd S (snd x) (snd y));
  sub := fun x y => (sub (fst x) (fst y), csub S (snd x) (snd y));
  mul := fun x y => (mul (fst x) (fst y), cmul S (fst x) (fst y) (snd x) (snd y));
  inv := tinv S;
  ofQ := fun q => (ofQ q, [])
|}.

(** The Taylor coefficients of [phi'] from those of [phi]: [(k+1) c_{k+1}]. *)
Fixpoint deriv_from (k : positive) (cs : list Q) : list Q :=
  match cs with
  | [] => []
  | c :: cs' => (Zpos k # 1) * c :: deriv_from (Pos.succ k) cs'
  end.

Definition deriv (cs : list Q) : list Q := deriv_from 1 (tl cs).

(** A normalizer with Taylor coefficients [cs] on a tangent element. *)
Definition tphi (S : alg) (cs : list Q) (x : car S * list (car S)) : car S * list (car S) :=
  let (v, dv) := x in
  let d := horner S (deriv cs) v in
  (horner S cs v, map (mul d) dv).

Section TangentRel.
Variables (A B : alg) (R : car A -> car B -> Prop).
Hypothesis HR : alg_rel A B R.

Definition TR (x : car A * list (car A)) (y : car B * list (car B)) : Prop :=
  R (fst x) (fst y) /\ Forall2 R (snd x) (snd y).

Lemma cadd_rel u u' v v' : Forall2 R u u' -> Forall2 R v v' -> Forall2 R (cadd A u v) (cadd B u' v').
Proof.
  intros H; revert v v'; induction H; intros v v' Hv; simpl; auto.
  destruct Hv; simpl; [constructor; auto|constructor; [apply (rel_add _ _ _ HR); auto|auto]].
Qed.

Lemma csub_rel u u' v v' : Forall2 R u u' -> Forall2 R v v' -> Forall2 R (csub A u v) (csub B u' v').
Proof.
  intros H; revert v v'; induction H; intros v v' Hv; simpl.
  - eapply Forall2_map; eauto; intros; apply neg_rel; auto.
  - destruct Hv; simpl; [constructor; auto|constructor; [apply (rel_sub _ _ _ HR); auto|auto]].
Qed.

Lemma cmul_rel v v' w w' u u' z z' : R v v' -> R w w' -> Forall2 R u u' -> Forall2 R z z' ->
  Forall2 R (cmul A v w u z) (cmul B v' w' u' z').
Proof.
  intros Hv Hw H; revert z z'; induction H; intros z z' Hz; simpl.
  - eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto.
  - destruct Hz; simpl.
    + constructor; [apply (rel_mul _ _ _ HR); auto|].
      eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto.
    + constructor; [apply (rel_add _ _ _ HR); apply (rel_mul _ _ _ HR); auto|auto].
Qed.

Lemma tangent_rel : alg_rel (tangent_alg A) (tangent_alg B) TR.
Proof.
  split; unfold TR; simpl; intros.
  - split; [apply (rel_zero _ _ _ HR)|constructor].
  - split; [apply (rel_one _ _ _ HR)|constructor].
  - destruct H, H0; split; [apply (rel_add _ _ _ HR)|apply cadd_rel]; auto.
  - destruct H, H0; split; [apply (rel_sub _ _ _ HR)|apply csub_rel]; auto.
  - destruct H, H0; split; [apply (rel_mul _ _ _ HR)|apply cmul_rel]; auto.
  - destruct x as [v dv], x' as [v' dv']; destruct H; simpl in *.
    split; simpl; [apply (rel_inv _ _ _ HR); auto|].
    eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto.
    apply neg_rel; auto; apply (rel_mul _ _ _ HR); apply (rel_inv _ _ _ HR); auto.
  - split; [apply (rel_ofQ _ _ _ HR)|constructor].
Qed.

Lemma tphi_rel cs x y : TR x y -> TR (tphi A cs x) (tphi B cs y).
Proof.
  destruct x as [v dv], y as [w dw]; intros [H1 H2]; unfold TR; simpl in *; split.
  - apply horner_rel; auto.
  - eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto.
    apply horner_rel; auto.
Qed.

End TangentRel.
