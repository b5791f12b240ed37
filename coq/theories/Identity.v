(** * Identity: eq. (A.3) and the reduction eq. (3) at width 2, any normalizer.

    Over the reals, with the normalizer an arbitrary function [phi : R -> R]
    (not even continuity is used) and any number of tokens:

    - [layer_identity] (eq. (A.3)): [S_A(P X) = P S_{P^T A P}(X)] for all
      2 x 2 matrices [P], [A];
    - [reduction_d2] (eq. (3)): the native network with 2 x 2 values equals
      the effective network at [M_i = P_{i-1}^T A_i P_{i-1}], [L = P_D],
      [P_i = V_i ... V_1], [A_i = Q_i K_i^T] (any query/key width), any depth.

    Both are identities of the layer of [Network.v] instantiated in [Ralg];
    the proofs reduce them to polynomial identities solved by [ring]. *)

From Coq Require Import List Reals QArith Lra.
From Symattn Require Import Alg Network.
Import ListNotations.
Local Open Scope R_scope.

Definition Ralg : alg := {|
  car := R; zero := 0; one := 1; add := Rplus; sub := Rminus; mul := Rmult; inv := Rinv; ofQ := Q2R
|}.

Definition transpose2 (P : list (list R)) : list (list R) :=
  match P with
  | [[a; b]; [c; d]] => [[a; c]; [b; d]]
  | _ => P
  end.

(** [A B] for 2 x 2 matrices: rows of [A] against the rows of [B^T]. *)
Definition mat_mul2 (A B : list (list R)) : list (list R) := mul_transpose Ralg A (transpose2 B).

Definition two (x : list R) : Prop := exists a b, x = [a; b].
Definition two2 (M : list (list R)) : Prop := exists a b c d, M = [[a; b]; [c; d]].

Lemma Rfold2 (a b : R) : fold_left Rplus [a; b] 0 = a + b.
Proof. simpl; ring. Qed.

Ltac crunch :=
  repeat match goal with
         | H : two _ |- _ => destruct H as [? [? ->]]
         | H : two2 _ |- _ => destruct H as [? [? [? [? ->]]]]
         end;
  cbn [attention mat_vec dot vsum zipw map fold_left mul_transpose mat_mul2 transpose2 vscale vadd
       vsum_vecs Ralg add mul inv zero car] in *.

Section Layer.
Variable phi : R -> R.

Lemma score_identity P A x y : two2 P -> two2 A -> two x -> two y ->
  dot Ralg (mat_vec Ralg P x) (mat_vec Ralg A (mat_vec Ralg P y)) =
  dot Ralg x (mat_vec Ralg (mat_mul2 (transpose2 P) (mat_mul2 A P)) y).
Proof. intros; crunch; ring. Qed.

Lemma mat_vec_two M x : two2 M -> two (mat_vec Ralg M x).
Proof. intros; crunch; eexists; eexists; reflexivity. Qed.

Lemma vscale_P c P x : two2 P -> two x -> vscale Ralg c (mat_vec Ralg P x) = mat_vec Ralg P (vscale Ralg c x).
Proof. intros; crunch; f_equal; [|f_equal]; ring. Qed.

Lemma vadd_P P x y : two2 P -> two x -> two y ->
  vadd Ralg (mat_vec Ralg P x) (mat_vec Ralg P y) = mat_vec Ralg P (vadd Ralg x y).
Proof. intros; crunch; f_equal; [|f_equal]; ring. Qed.

Lemma vadd_two x y : two x -> two y -> two (vadd Ralg x y).
Proof. intros; crunch; eexists; eexists; reflexivity. Qed.

Lemma vscale_two c x : two x -> two (vscale Ralg c x).
Proof. intros; crunch; eexists; eexists; reflexivity. Qed.

Lemma fold_vadd_P P vs v : two2 P -> two v -> Forall two vs ->
  fold_left (vadd Ralg) (map (mat_vec Ralg P) vs) (mat_vec Ralg P v) = mat_vec Ralg P (fold_left (vadd Ralg) vs v).
Proof.
  intros HP; revert v; induction vs as [|x vs IH]; intros v Hv Hvs; simpl; auto.
  inversion Hvs; subst. rewrite vadd_P by auto. apply IH; auto using vadd_two.
Qed.

Lemma fold_vadd_two vs v : two v -> Forall two vs -> two (fold_left (vadd Ralg) vs v).
Proof.
  revert v; induction vs; intros v Hv Hvs; simpl; auto.
  inversion Hvs; subst; apply IHvs; auto using vadd_two.
Qed.

Lemma zipw_scale_P P w X : two2 P -> Forall two X ->
  zipw (vscale Ralg) w (map (mat_vec Ralg P) X) = map (mat_vec Ralg P) (zipw (vscale Ralg) w X).
Proof.
  intros HP HX; revert w; induction HX; intros [|c w]; simpl; auto.
  rewrite vscale_P, IHHX by auto; reflexivity.
Qed.

Lemma zipw_scale_two w X : Forall two X -> Forall two (zipw (vscale Ralg) w X).
Proof. intros HX; revert w; induction HX; intros [|c w]; simpl; constructor; auto using vscale_two. Qed.

Lemma vsum_vecs_P P vs : two2 P -> Forall two vs -> vs <> [] ->
  vsum_vecs Ralg (map (mat_vec Ralg P) vs) = mat_vec Ralg P (vsum_vecs Ralg vs).
Proof.
  intros HP Hvs Hne; destruct vs as [|v vs]; [congruence|]. inversion Hvs; subst.
  simpl; apply fold_vadd_P; auto.
Qed.

Lemma vsum_vecs_two vs : Forall two vs -> vs <> [] -> two (vsum_vecs Ralg vs).
Proof. intros Hvs Hne; destruct vs; [congruence|]; inversion Hvs; subst; apply fold_vadd_two; auto. Qed.

(** Eq. (A.3): [S_A(P X) = P S_{P^T A P}(X)]. *)
Theorem layer_identity P A X : two2 P -> two2 A -> Forall two X ->
  attention Ralg phi A (map (mat_vec Ralg P) X) =
  map (mat_vec Ralg P) (attention Ralg phi (mat_mul2 (transpose2 P) (mat_mul2 A P)) X).
Proof.
  intros HP HA HX. unfold attention. rewrite !map_map.
  change (car Ralg) with R in *.
  apply map_ext_in; intros xa Hxa.
  assert (Hxa2 : two xa) by (rewrite Forall_forall in HX; auto).
  assert (Ew : map (fun mxb => phi (dot Ralg (mat_vec Ralg P xa) mxb)) (map (fun x => mat_vec Ralg A (mat_vec Ralg P x)) X)
             = map (fun mxb => phi (dot Ralg xa mxb)) (map (mat_vec Ralg (mat_mul2 (transpose2 P) (mat_mul2 A P))) X)).
  { rewrite !map_map; apply map_ext_in; intros y Hy.
    rewrite score_identity; auto. rewrite Forall_forall in HX; auto. }
  change (car Ralg) with R in *.
  rewrite Ew.
  destruct X as [|x0 X0]; [destruct Hxa|].
  rewrite zipw_scale_P by auto.
  rewrite vsum_vecs_P; [|auto|apply zipw_scale_two; auto|simpl; discriminate].
  rewrite vscale_P; [reflexivity|auto|].
  apply vsum_vecs_two; [apply zipw_scale_two; auto|simpl; discriminate].
Qed.

Lemma attention_two M X : Forall two X -> X <> [] -> Forall two (attention Ralg phi M X).
Proof.
  intros HX Hne; unfold attention; apply Forall_forall; intros y Hy.
  apply in_map_iff in Hy as [xa [<- Hxa]].
  apply vscale_two, vsum_vecs_two; [apply zipw_scale_two; auto|].
  destruct X; [congruence|simpl]. destruct (map _ _) eqn:E; simpl in E; [discriminate|congruence].
Qed.

End Layer.

(** ** Eq. (3): the reduction *)

Section Reduction.
Variable N : Type.
Variable ph : N -> R -> R.

Fixpoint reduction_from (P : list (list R)) (layers : list (N * list (list R) * list (list R) * list (list R)))
    : list (N * list (list R)) * list (list R) :=
  match layers with
  | [] => ([], P)
  | (n, Q, K, V) :: ls =>
      let (ss, L) := reduction_from (mat_mul2 V P) ls in
      ((n, mat_mul2 (transpose2 P) (mat_mul2 (mul_transpose Ralg Q K) P)) :: ss, L)
  end.

Definition I2 : list (list R) := [[1; 0]; [0; 1]].

(** The effective tuple [(M_1, ..., M_D), L] of eq. (3). *)
Definition reduction (layers : list (N * list (list R) * list (list R) * list (list R))) :=
  reduction_from I2 layers.

Definition square2 (l : N * list (list R) * list (list R) * list (list R)) : Prop :=
  let '(_, Q, K, V) := l in two2 (mul_transpose Ralg Q K) /\ two2 V.

Lemma mat_mul2_two A B : two2 A -> two2 B -> two2 (mat_mul2 A B).
Proof. intros; crunch; do 4 eexists; reflexivity. Qed.

Lemma transpose2_two A : two2 A -> two2 (transpose2 A).
Proof. intros; crunch; do 4 eexists; reflexivity. Qed.

Lemma mat_vec_comp V P x : two2 V -> two2 P -> two x ->
  mat_vec Ralg V (mat_vec Ralg P x) = mat_vec Ralg (mat_mul2 V P) x.
Proof. intros; crunch; f_equal; [|f_equal]; ring. Qed.

Lemma reduction_step layers : forall P Z, two2 P -> Forall two Z -> Z <> [] -> Forall square2 layers ->
  native_net Ralg N ph layers (map (mat_vec Ralg P) Z) =
  map (mat_vec Ralg (snd (reduction_from P layers)))
      (fold_left (fun Y (s : N * list (list R)) => attention Ralg (ph (fst s)) (snd s) Y) (fst (reduction_from P layers)) Z).
Proof.
  induction layers as [|[[[n Q] K] V] ls IH]; intros P Z HP HZ Hne Hsq; [reflexivity|].
  inversion Hsq as [|? ? Hsq1 Hls]; subst; cbv [square2] in Hsq1; destruct Hsq1 as [HA HV].
  unfold native_net in *; simpl fold_left.
  rewrite layer_identity by auto.
  rewrite map_map.
  rewrite (map_ext_in _ (mat_vec Ralg (mat_mul2 V P))).
  2:{ intros y Hy. apply mat_vec_comp; auto.
      pose proof (attention_two (ph n) (mat_mul2 (transpose2 P) (mat_mul2 (mul_transpose Ralg Q K) P)) Z HZ Hne) as T.
      rewrite Forall_forall in T; auto. }
  simpl reduction_from. destruct (reduction_from (mat_mul2 V P) ls) as [ss L] eqn:E. simpl.
  specialize (IH (mat_mul2 V P) (attention Ralg (ph n) (mat_mul2 (transpose2 P) (mat_mul2 (mul_transpose Ralg Q K) P)) Z)).
  rewrite E in IH; simpl in IH. apply IH; auto using mat_mul2_two.
  - apply attention_two; auto.
  - unfold attention; destruct Z; [congruence|discriminate].
Qed.

Lemma mat_vec_I2 x : two x -> mat_vec Ralg I2 x = x.
Proof. intros; crunch; unfold I2; cbn; f_equal; [|f_equal]; ring. Qed.

(** Eq. (3) at width 2: [F_native(theta) = F_{L, M}] with [(M, L) = reduction theta]. *)
Theorem reduction_d2 layers X : Forall square2 layers -> Forall two X -> X <> [] ->
  native_net Ralg N ph layers X =
  effective_net Ralg N ph (fst (reduction layers)) (snd (reduction layers)) X.
Proof.
  intros Hsq HX Hne.
  assert (EX : map (mat_vec Ralg I2) X = X).
  { rewrite <- (map_id X) at 2. apply map_ext_in; intros x Hx; apply mat_vec_I2.
    rewrite Forall_forall in HX; auto. }
  rewrite <- EX at 1.
  unfold effective_net, reduction. rewrite reduction_step; auto.
  unfold I2; do 4 eexists; reflexivity.
Qed.

End Reduction.
